//! Deliberate faults: the mutation audit's catalogue (`cargo xtask mutants`, docs/mutation-audit.md)
//! and the grader's own tests (`xtask/tests/grade.rs`). Each turns the checker into a realistic wrong
//! implementation of one rule of the spec, at the point where the checker applies that rule
//! (a `fault!` site, which names the fault). They exist only in a build with the `mutants` feature,
//! and act only when `WAI_MUTANT` names one of them; in every other build a site is the right
//! expression alone and the wrong one is never compiled.
//!
//! [`CATALOGUE`] lists every fault once, with the clause it breaks. A fault the committed vectors
//! cannot catch because it computes the same integers on every input the spec allows is marked
//! equivalent, with the argument.
//!
//! [`FAULTS`] is a second kind, kept apart so that the audit's counts are the catalogue's alone:
//! implementation faults, which read every clause right but compute it the way a real int8/int16
//! kernel goes wrong (a 32-bit accumulator, a `float32` requantisation, a dropped tail). They show
//! which tier of the tree catches such a kernel (`cargo xtask faults`, docs/scale.md).

/// One fault of the catalogue.
pub struct Mutant {
    pub name: &'static str,
    /// The clause it breaks: a section of integer-operators (`§5.2`), or `process` for the
    /// grader's crash, hang and garbage faults.
    pub section: &'static str,
    pub about: &'static str,
    pub expect: Expect,
}

/// What the audit expects of a fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Some committed vector fails.
    Killed,
    /// It computes the same integers on every input the spec allows: why.
    Equivalent(&'static str),
}

const fn m(name: &'static str, section: &'static str, about: &'static str) -> Mutant {
    Mutant {
        name,
        section,
        about,
        expect: Expect::Killed,
    }
}

const fn eq(name: &'static str, section: &'static str, about: &'static str, why: &'static str) -> Mutant {
    Mutant {
        name,
        section,
        about,
        expect: Expect::Equivalent(why),
    }
}

/// Every fault, by section.
pub const CATALOGUE: &[Mutant] = &[
    // §2 Notation and integer functions.
    m("half-even-up", "§2", "R_half_even rounds every tie up"),
    m("half-even-ties-down", "§2", "R_half_even rounds every tie down"),
    m(
        "half-up-away-from-zero",
        "§2",
        "R_half_up rounds a negative tie toward −∞",
    ),
    m("floor-truncates", "§2", "⌊p / 2^s⌋ truncates toward zero on negative p"),
    m(
        "shift-mod-64",
        "§2",
        "R_round takes its shift modulo 64 (§6's fabric shift)",
    ),
    eq(
        "exp-cutoff-64",
        "§2",
        "exp_neg_q16 returns 0 only from n ≥ 64",
        "at n = 63, y ≤ 65553 < 2^17, so ⌊y / 2^63⌋ = 0: the result is 0 for n = 63 either way",
    ),
    m(
        "exp-cutoff-65-shift-mod-64",
        "§2",
        "exp_neg_q16 returns 0 only from n ≥ 65, and shifts y by n modulo 64 (a 64-bit shift)",
    ),
    m(
        "exp-square-rounded",
        "§2",
        "exp_neg_q16 rounds t² / 2^16 half up instead of flooring",
    ),
    m(
        "exp-result-rounded",
        "§2",
        "exp_neg_q16 rounds y / 2^n half up instead of flooring",
    ),
    m(
        "rsqrt-root-ceil",
        "§2",
        "rsqrt_q16 divides by isqrt_ceil(v) instead of isqrt(v)",
    ),
    eq(
        "rsqrt-zero-as-one",
        "§2",
        "rsqrt_q16(0) is 2^32 instead of 0",
        "every caller forms U = V + ε or T + ε with ε ≥ 1 (§5.7), so rsqrt_q16 never meets v = 0",
    ),
    m(
        "bits-negative-magnitude",
        "§2",
        "bits([lo, hi]) measures a negative end by its magnitude (−128 needs 9 bits)",
    ),
    // §3 Tensors and ranges.
    m(
        "check-ignored",
        "§3",
        "a check policy on a produced tensor never refuses",
    ),
    m("check-hi-exclusive", "§3", "a check range refuses its own upper bound"),
    m(
        "clamp-policy-ignored",
        "§3",
        "a clamp policy on a produced tensor is not applied",
    ),
    m(
        "clamp-policy-before-op",
        "§3",
        "a clamp policy is applied to the operator's inputs, not its results",
    ),
    m(
        "input-clamp-as-check",
        "§3",
        "a clamp input refuses a value outside its range instead of clamping it",
    ),
    m(
        "input-check-ignored",
        "§4",
        "a check input's values are never compared with its range",
    ),
    m(
        "whg1-exponents-unchecked",
        "§3",
        "the exponent rule of add, concat and chunk_add is not checked",
    ),
    // §4 Exactness, evaluation order and refusal.
    m(
        "run-sizes-before-channels",
        "§4",
        "run step 1 checks an input's sizes before its channel count",
    ),
    m(
        "run-max-sides-swapped",
        "§4",
        "run step 1 compares H with max_w and W with max_h",
    ),
    m("run-max-elems-exclusive", "§4", "run step 1 refuses C·H·W = max_elems"),
    m(
        "run-scalars-after-plan",
        "§4",
        "run step 2 (scalar ranges) comes after step 3 (the plan)",
    ),
    m(
        "run-values-in-step-1",
        "§4",
        "run step 1 also checks each input's values against its check range (step 4's), input by input",
    ),
    m(
        "plan-outputs-uncapped",
        "§4",
        "run step 3 does not check an output against max_elems",
    ),
    m(
        "plan-convt-caps-after-shape",
        "§4",
        "conv_transpose's uncropped sizes are checked after its shape rule",
    ),
    // §5.1 rq.
    m(
        "rq-bias-placement-swapped",
        "§5.1",
        "a pre bias is added after rounding and a post bias before",
    ),
    m("rq-mult-after-round", "§5.1", "rq rounds t, then multiplies by mult"),
    m(
        "rq-shift-channel-0",
        "§5.1",
        "a per-channel shift uses channel 0's shift for every channel",
    ),
    // §5.2 conv.
    m(
        "conv-pad-bottom-right",
        "§5.2",
        "conv's zero padding is all placed at the bottom and right",
    ),
    m("conv-stride-swapped", "§5.2", "conv steps rows by sw and columns by sh"),
    m(
        "conv-kernel-flipped",
        "§5.2",
        "conv flips the kernel (a true convolution, not §5.2's correlation)",
    ),
    m(
        "conv-groups-interleaved",
        "§5.2",
        "conv's output channel o reads group o mod groups, not ⌊o/og⌋",
    ),
    m("plan-conv-out-ceil", "§5.2", "conv's Ho is ⌈(H + 2ph − kh) / sh⌉ + 1"),
    // §5.3 conv_transpose.
    m(
        "convt-weights-conv-layout",
        "§5.3",
        "conv_transpose reads its weights as Wt[cout][cin], conv's layout",
    ),
    m("convt-kernel-flipped", "§5.3", "conv_transpose flips the kernel"),
    m(
        "convt-out-pad-top-left",
        "§5.3",
        "output padding is added at the top and left, not the bottom and right",
    ),
    m(
        "plan-convt-out-pad-ignored",
        "§5.3",
        "conv_transpose's output sides ignore the output padding",
    ),
    // §5.4 rescale, chscale, mul.
    m(
        "chscale-row-0",
        "§5.4",
        "chscale always reads row 0 of M, whatever the scalar",
    ),
    m("chscale-table-transposed", "§5.4", "chscale reads M as M[c][r]"),
    m(
        "mul-b-plane-0",
        "§5.4",
        "mul broadcasts b's channel 0 even when b has C channels",
    ),
    // §5.5 elementwise.
    m(
        "chunk-add-interleaved",
        "§5.5",
        "chunk_add adds channels 2c and 2c + 1 instead of c and c + C/2",
    ),
    m("leaky-truncates", "§5.5", "leaky's ⌊v·a / 2^f⌋ truncates toward zero"),
    eq(
        "leaky-zero-negative",
        "§5.5",
        "leaky sends v = 0 through its negative branch",
        "at v = 0 the negative branch gives ⌊0·a / 2^f⌋ = 0 = v",
    ),
    eq(
        "clamp-min-first",
        "§5.5",
        "clamp is computed as max(min(v, hi), lo)",
        "for lo ≤ hi (a load rule of §5.5) max(min(v, hi), lo) = min(max(v, lo), hi) for every v",
    ),
    // §5.6 lut16.
    m("lut16-offset-32767", "§5.6", "lut16 reads T[v + 32767]"),
    m("whg1-lut16-t0-unchecked", "§5.6", "a table with T[0] ≠ 0 loads"),
    m(
        "whg1-lut16-e-in-unchecked",
        "§5.6",
        "lut16's e_in is not compared with its input's exponent",
    ),
    // §5.7 normalisation.
    m(
        "igdn-floor-sum",
        "§5.7",
        "igdn floors the sum of γ·x² once instead of each term",
    ),
    m("igdn-gamma-transposed", "§5.7", "igdn reads γ[j][i] for γ[i][j]"),
    m(
        "igdn-norm-abs",
        "§5.7",
        "igdn takes isqrt(|N|) instead of isqrt(max(0, N))",
    ),
    m(
        "ln-mean-floor",
        "§5.7",
        "layernorm_c's mean is ⌊S / C⌋ instead of trunc((S + ⌊C/2⌋·sgn S) / C)",
    ),
    m("ln-var-ceil", "§5.7", "layernorm_c's V is ⌈T / C⌉"),
    eq(
        "ln-beta-inside-floor",
        "§5.7",
        "layernorm_c adds β·2^16 before the final floor",
        "⌊(a + β·2^16) / 2^16⌋ = ⌊a / 2^16⌋ + β for every integer a and β",
    ),
    m("l2norm-eps-ignored", "§5.7", "l2norm's U is T, without ε"),
    m(
        "softmax-no-half",
        "§5.7",
        "softmax divides e·2^16 by Σ without adding ⌊Σ/2⌋",
    ),
    // §5.8 scalar functions.
    m("sigmoid-by-symmetry", "§5.8", "sigmoid of v < 0 is 2^16 − sigmoid(−v)"),
    m("elu-zero-identity", "§5.8", "elu(0) is 0 instead of ⌊17·α / 2^16⌋"),
    // §5.9 contractions.
    m("gram-operands-swapped", "§5.9", "gram computes Σ B[i]·A[j]"),
    m(
        "gram-group-offset-missing",
        "§5.9",
        "gram's B channel is j, not g·d + j",
    ),
    m(
        "apply-group-offset-missing",
        "§5.9",
        "apply's V channel is j, not g·d + j",
    ),
    m(
        "contraction-round-floor",
        "§5.9",
        "gram and apply floor whatever their round",
    ),
    // §5.10 data movement.
    m("concat-reversed", "§5.10", "concat takes its inputs in reverse order"),
    m("split-start-ignored", "§5.10", "split starts at channel 0"),
    m(
        "plan-split-start-times-count",
        "§5.10",
        "split's channel rule checks start·count ≤ C (a cargo-mutants survivor)",
    ),
    m(
        "pixel-shuffle-transposed",
        "§5.10",
        "pixel_shuffle takes channel c·r² + j·r + i to row offset i",
    ),
    m(
        "pixel-unshuffle-transposed",
        "§5.10",
        "pixel_unshuffle's channel order is transposed",
    ),
    m(
        "pad-rep-zeros",
        "§5.10",
        "pad_rep pads with zeros instead of repeating the last row and column",
    ),
    m("plan-pad-rep-floor", "§5.10", "pad_rep's sides are ⌊H/m⌋·m"),
    m("crop-to-bottom-right", "§5.10", "crop_to keeps the bottom-right corner"),
    m(
        "plan-crop-to-strict",
        "§5.10",
        "crop_to refuses a ref as large as its input",
    ),
    m(
        "crop-offsets-swapped",
        "§5.10",
        "crop reads x0 as the row offset and y0 as the column offset",
    ),
    m(
        "operand-scalar-index",
        "§5.10",
        "a scalar operand is read as its scalar's index, not its value",
    ),
    m(
        "plan-crop-load-start-lo",
        "§5.10",
        "at load, a scalar crop start is planned at its range's lo, not 0",
    ),
    m(
        "plan-crop-load-len-hi",
        "§5.10",
        "at load, a scalar crop length is its range's hi, not min(hi, S − s0)",
    ),
    m(
        "plan-unshuffle-divisibility-unchecked",
        "§5.10",
        "pixel_unshuffle accepts sides that r does not divide",
    ),
    m(
        "subpos-split-ab-swapped",
        "§5.10",
        "subpos_split reads order[k] as (b, a)",
    ),
    m(
        "subpos-merge-order-not-inverted",
        "§5.10",
        "subpos_merge uses order as the map from position to input",
    ),
    // §5E stage operators.
    m("dequantize-f-63", "§5E", "E2 accepts f = 63"),
    m(
        "dequantize-unchecked",
        "§5E",
        "E2 wraps a value past i64 instead of refusing it",
    ),
    m("bucket-ceil-lt", "§5E", "E3 ceil compares σ′ < e_i"),
    m("bucket-ceil-last-edge", "§5E", "E3 ceil compares e_{N−1} too"),
    m("bucket-ceil-no-max", "§5E", "E3 ceil compares σ, not max(σ, e_0)"),
    m("bucket-floor-lt", "§5E", "E3 floor counts e_i < σ"),
    m(
        "bucket-floor-order-unchecked",
        "§5E",
        "E3 floor accepts decreasing edges",
    ),
    m("coded-ge", "§5E", "E4 is v ≥ thr"),
    m("scale-index-floor", "§5E", "E5 floors instead of R_half_up"),
    m("scale-index-clamp-n", "§5E", "E5 clamps to n instead of n − 1"),
    m("block-stat-floor", "§5E", "E6 floors S / 2^s instead of R_half_up"),
    m(
        "block-stat-shift-full-blocks-only",
        "§5E",
        "E6 applies s only to full blocks",
    ),
    m("band-lookup-gt", "§5E", "E7 counts v > e_k"),
    m(
        "residual-r-bound-short",
        "§5E",
        "E9's 32-bit form takes R = ⌊(hi − lo)/q⌋, one short",
    ),
    eq(
        "residual-form32-in-i64",
        "§5E",
        "E9 uses its 32-bit form's clamp of r outside that form's conditions",
        "E9's identity holds for every lo < hi (its proof uses only R·q > hi − lo), and in i128 no value overflows",
    ),
    m(
        "checkerboard-anchor-inverted",
        "§5E",
        "E13 checkerboard(anchor) takes the other parity",
    ),
    m(
        "checkerboard-parity-with-channel",
        "§5E",
        "E13 checkerboard's parity includes the channel",
    ),
    m("rans-t4097-accepts-2", "§5E", "E1 t4097 accepts a table of n = 2"),
    m(
        "rans-offset-unchecked",
        "§5E",
        "E1 accepts an offset that does not fit i32",
    ),
    m("rans-strict-bounds-unordered", "§5E", "E1 strict accepts lo > hi"),
    m(
        "rans-escape-parity-swapped",
        "§5E",
        "E1's escape value reads even raw as negative",
    ),
    m(
        "rans-lenient-unsaturated",
        "§5E",
        "E1 lenient does not saturate the escape to i32",
    ),
    m(
        "rans-strict-reads-continuation",
        "§5E",
        "E1 strict reads continuation groups",
    ),
    m(
        "rans-range-before-exhausted",
        "§5E",
        "E1 strict checks the symbol's range before the stream's end",
    ),
    eq(
        "rans-minimal-before-count",
        "§5E",
        "E1 strict checks minimality (3) before count > 8 (2)",
        "a count past 8 reads no group, so its last group is 0 and check 3 applies too: both give stream_noncanonical at the same symbol",
    ),
    m(
        "rans-final-only-refuses-early",
        "§5E",
        "E1 final_only refuses at the symbol where the stream runs out",
    ),
    m(
        "rans-canonical-end-unchecked",
        "§5E",
        "E1 canonical never checks the stream's canonical end",
    ),
    m("mans-sentinel-kept", "§5E", "E8 init keeps the sentinel bit in h"),
    m("mans-flush-one-byte-short", "§5E", "E8 flush moves p one byte too few"),
    m("mans-bound-signed", "§5E", "E8 reads B_y as a signed byte"),
    m("mans-escape-short-read-4", "§5E", "E8 sgm's short escape reads 4 bits"),
    m(
        "mans-escape-sign-swapped",
        "§5E",
        "E8 sgm's escape sign bit is read the other way",
    ),
    m(
        "mans-group-flush-after-out",
        "§5E",
        "E8 sgm flushes a group after its outs",
    ),
    m(
        "mans-remainder-pair-one-state",
        "§5E",
        "E8 sgm decodes a remainder pair from s1 twice",
    ),
    m(
        "mans-zp-doubles-to-257",
        "§5E",
        "E8 fac's Zp doubles while i·2^nb ≤ 256",
    ),
    m(
        "mans-fac-order-unchecked",
        "§5E",
        "E8 fac accepts a row whose counts decrease",
    ),
    m(
        "mans-fac-table-reset",
        "§5E",
        "E8 fac's T_z starts at zeros for every row",
    ),
    eq(
        "mans-fac-row-flush-only-remainder",
        "§5E",
        "E8 fac omits a row's final flush after whole groups",
        "when L′ mod 4 = 0 the final flush follows a flush (the last group's, the previous row's or init's) with no read between: b ≥ 56 gives d = 7 XOR 7 = 0 and the same p, h and b, so it is a no-op and cannot refuse",
    ),
    // §6 What an implementation may change (K_c).
    m("kc-ceil", "§6", "K_c is ⌈(2^31 − 1) / P⌉"),
    m("kc-zero-when-unbounded", "§6", "K_c is 0 when P = 0, not unbounded"),
    // §7 Profiles.
    m("acc32-shift-64", "§7.2", "acc32 accepts an rq shift of 64"),
    m(
        "acc32-igdn-shift-63",
        "§7.2",
        "acc32's igdn.shift condition refuses a gf or frac of 63 (a cargo-mutants survivor)",
    ),
    m(
        "acc32-chscale-shift-63",
        "§7.2",
        "acc32's chscale.s condition refuses a shift of 63 (a cargo-mutants survivor)",
    ),
    m(
        "acc32-pre-bias-checked",
        "§7.2",
        "acc32's post-bias condition is applied to a pre bias",
    ),
    m(
        "acc32-igdn-frac-unchecked",
        "§7.2",
        "acc32's igdn.shift condition checks gf only",
    ),
    m(
        "acc32-leaky-a-unchecked",
        "§7.2",
        "acc32's leaky.a condition is not checked",
    ),
    m(
        "acc32-input-ranges-unchecked",
        "§7.2",
        "acc32 does not check graph inputs' declared ranges",
    ),
    m(
        "profile-check-policy-allowed",
        "§7.2",
        "acc32 accepts a check policy on a produced tensor",
    ),
    // §8.1 Intervals.
    m(
        "sat-never-flagged",
        "§8.1",
        "sat is applied but never marks the node saturated",
    ),
    m(
        "sat-bound-counts-as-saturated",
        "§8.1",
        "a result of exactly ±2^255 marks the node saturated",
    ),
    m(
        "iv-hull-keeps-first",
        "§8.1",
        "a per-channel hull keeps the first channel's interval",
    ),
    m(
        "iv-clamp-policy-ignored",
        "§8.1",
        "a clamp policy does not narrow the tensor's interval",
    ),
    m(
        "iv-check-policy-derived",
        "§8.1",
        "a check policy's interval is the producer result",
    ),
    m(
        "iv-check-empty-accepted",
        "§8.1",
        "an empty check interval is not refused at load",
    ),
    m(
        "load-channels-after-sizes",
        "§10.5",
        "load step 7 plans the shapes before the channel counts",
    ),
    // §8.2 Term and partial-sum intervals.
    m(
        "iv-corner-two-products",
        "§8.2",
        "a corner hull uses lo·lo and hi·hi only",
    ),
    m("iv-partial-sum-no-bias", "§8.2", "A(K, b) leaves out the bias"),
    // §8.3 Operator bound rules.
    m(
        "iv-rq-p-unordered",
        "§8.3",
        "rq.p is [t_lo·m, t_hi·m] without ordering (a negative multiplier)",
    ),
    m(
        "iv-rq-p-no-addend",
        "§8.3",
        "rq.p leaves out the rounding addend 2^(s−1)",
    ),
    m("iv-rq-q-with-addend", "§8.3", "rq.q rounds P with the addend"),
    m("iv-rq-post-bias-ignored", "§8.3", "rq.y leaves out the post bias"),
    m("iv-convt-one-residue", "§8.3", "convT.acc sums all taps as one residue"),
    eq(
        "iv-convt-empty-residue-missed",
        "§8.3",
        "convT.acc omits the empty residue's A(∅, b)",
        "A(K, b) = [min(0, b) + Σ min(0, lo_k), max(0, b) + Σ max(0, hi_k)] contains [min(0, b), max(0, b)] = A(∅, b) for every K, and residue (0, 0) always holds a tap, so the hull never changes",
    ),
    m(
        "iv-chscale-all-rows",
        "§8.3",
        "chscale's rule hulls every row of M, not the scalar's range",
    ),
    m("iv-gram-length-h", "§8.3", "gram's L is H instead of H·W"),
    m(
        "iv-apply-length-groups",
        "§8.3",
        "apply's term count is groups instead of d",
    ),
    m(
        "iv-chunk-add-one-term",
        "§8.3",
        "chunk_add's interval is [l, h] instead of [2l, 2h]",
    ),
    m("iv-relu-lo-kept", "§8.3", "relu's interval keeps a negative lo"),
    m(
        "iv-abs-straddle-lo",
        "§8.3",
        "abs of an interval across 0 starts at min(−l, h), not 0",
    ),
    m(
        "iv-leaky-neg-part-full",
        "§8.3",
        "leaky's negative part is [l, h] instead of [l, min(h, −1)]",
    ),
    m(
        "iv-lut16-ends-only",
        "§8.3",
        "lut16's interval reads T at the ends only",
    ),
    m(
        "iv-igdn-x2-no-zero",
        "§8.3",
        "igdn.x2 of an interval across 0 does not start at 0",
    ),
    m("iv-igdn-n-no-beta", "§8.3", "igdn.N is A(terms, 0), without β"),
    m(
        "iv-igdn-r-from-n",
        "§8.3",
        "igdn.r is taken from igdn.N instead of the final norm",
    ),
    m("iv-ln-m-no-half", "§8.3", "ln.m leaves out ⌊C/2⌋"),
    m(
        "iv-ln-dk-no-min",
        "§8.3",
        "ln.dk's D leaves out lemma L1's second bound",
    ),
    m("iv-l2-t-no-eps", "§8.3", "l2.T leaves out ε"),
    m(
        "iv-softmax-e-2^16",
        "§8.3",
        "softmax's rule takes 2^16 for the largest e_x, not 65553",
    ),
    m(
        "iv-sigmoid-num-2^32",
        "§8.3",
        "sig.num's top is 2^32 instead of 65553·2^16",
    ),
    m("iv-elu-p-no-17", "§8.3", "elu.p leaves out e − 2^16 = 17"),
    m(
        "iv-exp-t2-from-zero",
        "§8.3",
        "exp.t2's interval starts at 0 instead of 43245²",
    ),
    m("whg1-leaky-f-64", "§10.4", "a leaky with f = 64 loads"),
    // §8.5 The certificate.
    m(
        "certificate-key-order",
        "§8.5",
        "a certificate writes its last two members in the wrong order",
    ),
    m(
        "first-failure-tie-reversed",
        "§8.5",
        "a first-failure tie on bits goes to the greater key",
    ),
    m(
        "profile-results-unchecked",
        "§8.5",
        "a node's producer results are not compared with its profile",
    ),
    eq(
        "profile-saturated-fits",
        "§8.5",
        "a saturated node fits whatever its intervals",
        "on inputs that fit i64 no rule of §8.3 forms a value past 2^216, so a node saturates only on an input interval past i64, from an earlier node that fails both profiles and is the first failure; and the saturated result is recorded at ±2^255, so the node fits neither profile either way",
    ),
    m(
        "mac-a-bits-of-outputs",
        "§8.5",
        "mac.a_bits records the output's width, not the inputs'",
    ),
    m(
        "mac-a-bits-before-policy",
        "§8.5",
        "mac.a_bits records an input's producer result, not its interval after the policy",
    ),
    m(
        "mac-w-bits-magnitude",
        "§8.5",
        "mac.w_bits is the bits of [−m, m], m the weights' largest magnitude",
    ),
    m("load-acc64-not-required", "§8.6", "a bare graph that fails acc64 loads"),
    // §9.2 wai-ops/1-npu.
    m(
        "npu-post-bias-flag-missing",
        "§9.2",
        "the rq_post_bias flag is never raised",
    ),
    m(
        "npu-neg-mult-flag-missing",
        "§9.2",
        "the rq_neg_mult flag is never raised",
    ),
    m(
        "npu-neg-mult-zero",
        "§9.2",
        "rq_neg_mult is raised for a zero multiplier (an rq's or a chscale M's) with no negative one (a cargo-mutants survivor)",
    ),
    m("npu-shift-range-32", "§9.2", "rq_shift_range is raised only past 32"),
    m("npu-state-add-missing", "§9.2", "the state_add flag is never raised"),
    m(
        "npu-depthwise-cout-unchecked",
        "§9.2",
        "a depthwise conv with cout ≠ cin is in the subset",
    ),
    m(
        "npu-crop-scalar-missing",
        "§9.2",
        "a crop with scalar operands is in the subset",
    ),
    m("npu-reasons-acc32-missing", "§9.2", "a set failing acc32 keeps npu"),
    // §10 WHG1.
    m(
        "whg1-reserved-unchecked",
        "§10.1",
        "nonzero reserved header fields load",
    ),
    m("whg1-max-elems-cap-exclusive", "§10.1", "max_elems = 2^26 is refused"),
    m(
        "whg1-mixed-sizes",
        "§10.2",
        "inputs that disagree on declaring sizes load",
    ),
    m(
        "whg1-state-init-unchecked",
        "§10.3",
        "a state's init outside its input's range loads",
    ),
    m(
        "whg1-state-init-source-range",
        "§10.3",
        "a state's init is checked against its source output's range, not its own",
    ),
    m(
        "whg1-state-src-as-tensor",
        "§10.3",
        "a state's src is read as a tensor index, not a position in the outputs table",
    ),
    m(
        "whg1-trailing-params",
        "§10.4",
        "an operator's parameters may have trailing bytes",
    ),
    m(
        "state-not-carried",
        "§10.3",
        "no state input carries its output to the next decode",
    ),
    m("state-init-zero", "§10.3", "a state input starts at 0, not at its init"),
    m(
        "state-policy-skipped",
        "§10.3",
        "a carried state skips its own input policy (§4 run step 4)",
    ),
    m(
        "state-carried-before-policy",
        "§10.3",
        "a state carries its source's producer result, before the source's clamp",
    ),
    m(
        "refused-decode-resets-state",
        "§10.3",
        "a refused decode resets every state to its init",
    ),
    // §13 Lowerings.
    m("synth-bias-post", "§13.1", "int_synth's bias is placed post"),
    m("synth-input-unsigned", "§13.1", "int_synth's input range is [0, 255]"),
    m("whm1-range-no-plus-one", "§13.2", "P_ℓ's conv bound leaves out the + 1"),
    m(
        "whm1-igdn-n-minus-one",
        "§13.2",
        "P_ℓ's igdn N is Bb + c·(⌊G·X²/2^gf⌋ − 1) (a cargo-mutants survivor)",
    ),
    m(
        "whm1-range-one-past",
        "§13.2",
        "X_ℓ is one past the largest X with P_ℓ(X)",
    ),
    m("rgb8-half-even", "§13.0", "the RGB8 and PCM steps round half_even"),
    m("wam1-terms-k-squared", "§13.3", "WAM1's tag 0 counts c·k·k terms"),
    m("world-clamp-one-short", "§13.5", "world/1's T clamps to ±(2^afrac − 1)"),
    m(
        "jpegai-conv-unpadded",
        "§13.6.1",
        "the scale graph's 3×3 conv has no padding",
    ),
    m("jpegai-gain-post", "§13.6.1", "the scale graph's gains are a post bias"),
    m("scale-path-z-offset-32", "§13.6.1", "z is sym − 32"),
    m(
        "scale-path-chroma-no-skip",
        "§13.6.1",
        "the chroma plane does not pass over luma's hyper-latent rows",
    ),
    m(
        "scale-path-grfs-rows-swapped",
        "§13.6.1",
        "band_lookup takes row 0 when the GRFS flag is clear",
    ),
    m("scale-path-coded-383", "§13.6.1", "the mask is coded(v, 383)"),
    // cis2-spec.
    m(
        "cis2-model-flags-unchecked",
        "CIS-2 §3.1",
        "a BPE model's dropout, unk_token, continuing_subword_prefix and end_of_word_suffix are not checked (a cargo-mutants survivor)",
    ),
    m(
        "cis2-max-positions-required",
        "CIS-2 §2.2",
        "a config.json without max_position_embeddings is refused (config_unsupported), as the earlier reading had it; C7 leaves the positions to §7.3's bound",
    ),
    // The grader's process faults (docs/protocol.md).
    m(
        "crash-on-stage",
        "process",
        "the process exits when it meets a stage request",
    ),
    m(
        "hang-on-cis2",
        "process",
        "the process sleeps forever on a CIS-2 ops request",
    ),
    m(
        "garbage-on-dequant",
        "process",
        "the process prints a line that is not JSON for a DetessDequant request",
    ),
];

/// An implementation fault: every clause read right, computed as a real int8/int16 kernel
/// computes it wrongly.
pub struct Fault {
    pub name: &'static str,
    /// What the kernel does, precisely enough to reimplement, and where.
    pub about: &'static str,
}

/// The implementation faults (`cargo xtask faults`). None is in [`CATALOGUE`], so none counts in
/// the mutation audit.
pub const FAULTS: &[Fault] = &[
    Fault {
        name: "acc32-wrap",
        about: "the accumulators of `conv`, `conv_transpose`, `gram` and `apply` are 32-bit two's complement: \
                every partial sum wraps to i32 (so the sum reaching `rq` is the exact one wrapped once)",
    },
    Fault {
        name: "f32-rq",
        about: "`rq` in `float32`: `t` and `mult` (1 when absent) each rounded to binary32 (ties to even), \
                their product rounded to binary32 and read back as the integer it is, then shifted and \
                rounded exactly; in every `rq` (`conv`, `conv_transpose`, `rescale`, `mul`, `gram`, \
                `apply`) and in `chscale`, which follows its steps",
    },
    Fault {
        name: "i16-pair-sat",
        about: "`conv` sums its products in pairs as `pmaddubsw` does: at each tap, the products of the \
                group's input channels 2k and 2k + 1 (the last with a zero when the group's count is odd) \
                are added and saturated to int16 before they are accumulated. `conv` only: the checker's \
                `conv_transpose` scatters, and has no such pairs",
    },
    Fault {
        name: "tile16-tail",
        about: "`conv` runs its input channels in tiles of 16 and has no remainder loop: when a group has \
                `cin/groups > 16` channels, those past the last multiple of 16 are skipped (their terms \
                are missing; a group of 16 or fewer takes another path, whole). `conv` only",
    },
    Fault {
        name: "w8-tail",
        about: "`conv` computes output columns in blocks of 8; in the last block when it is partial (every \
                column when `Wo < 8`, none when 8 divides `Wo`), a tap on the right padding (column \
                `v ≥ W` of a row `u` inside the input) reads the input's element `(c·H + u)·W + v` in \
                CHW order instead of 0: row `u + 1`'s column `v − W`, past a plane's last row the next \
                channel's first, past the tensor 0. `conv` only",
    },
    Fault {
        name: "split-rq",
        about: "a reduction of 2^10 terms or more is split in two (split-K): the first ⌈L/2⌉ terms and the \
                rest are each requantised with the `rq`, and the two results added. In `conv` (`L = \
                cin/groups·kh·kw` in the order `ci`, `i`, `j`, padding taps included), `gram` (`L = H·W`, \
                row-major) and `apply` (`L = d`); not in the checker's scattered `conv_transpose`",
    },
];

/// A fault's site: `fault!(name, right, wrong)` is the expression `right`, the rule as the spec
/// states it, except in a build with the `mutants` feature while `WAI_MUTANT` names the fault, when it
/// is `wrong`. Without the feature it is `right` alone: `wrong` is never compiled, so a function that
/// only a wrong expression calls is `#[cfg(feature = "mutants")]`. In every build `name` is checked
/// against [`CATALOGUE`] and [`FAULTS`] as the crate compiles. Exported crate-wide (`#[macro_use]`
/// in lib.rs); the tests hold the tables to the names at these sites, the only callers of [`active`].
#[cfg(feature = "mutants")]
macro_rules! fault {
    ($name:literal, $right:expr, $wrong:expr $(,)?) => {{
        const _: () = assert!($crate::mutants::listed($name), concat!("no fault is named ", $name));
        // Asked once per site, so that a site in an inner loop costs a load.
        static ON: std::sync::LazyLock<bool> = std::sync::LazyLock::new(|| $crate::mutants::active($name));
        if *ON { $wrong } else { $right }
    }};
}

/// A fault's site without the `mutants` feature: the right expression alone.
#[cfg(not(feature = "mutants"))]
macro_rules! fault {
    ($name:literal, $right:expr, $wrong:expr $(,)?) => {{
        const _: () = assert!($crate::mutants::listed($name), concat!("no fault is named ", $name));
        $right
    }};
}

/// Whether `name` is in [`CATALOGUE`] or [`FAULTS`] (for `fault!`'s check as the crate compiles).
pub const fn listed(name: &str) -> bool {
    const fn same(a: &str, b: &str) -> bool {
        let (a, b) = (a.as_bytes(), b.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        let mut i = 0;
        while i < a.len() {
            if a[i] != b[i] {
                return false;
            }
            i += 1;
        }
        true
    }
    let mut i = 0;
    while i < CATALOGUE.len() {
        if same(CATALOGUE[i].name, name) {
            return true;
        }
        i += 1;
    }
    let mut i = 0;
    while i < FAULTS.len() {
        if same(FAULTS[i].name, name) {
            return true;
        }
        i += 1;
    }
    false
}

/// Whether the named fault is on: in a `mutants` build, when `WAI_MUTANT` names it.
#[cfg(feature = "mutants")]
pub fn active(name: &str) -> bool {
    static CHOSEN: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    CHOSEN.get_or_init(|| std::env::var("WAI_MUTANT").ok()).as_deref() == Some(name)
}

/// Whether the named fault is on: never, without the `mutants` feature.
#[cfg(not(feature = "mutants"))]
pub const fn active(_name: &str) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use std::path::Path;

    /// The fault named at each `fault!` site of one source, comment lines apart. Strict: a site
    /// must name its fault by a string literal, and no source but this one calls [`active`].
    fn sites(file: &str, text: &str) -> Vec<String> {
        // Spelt in two so that this scanner is no site itself.
        const SITE: &str = concat!("fault", "!(");
        let code: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .flat_map(|l| [l, "\n"])
            .collect();
        assert!(
            file.ends_with("src/mutants.rs") || !code.contains("mutants::active("),
            "{file}: a fault switched by `active` outside `fault!`"
        );
        let site = |piece: &str| {
            let name = piece.trim_start().strip_prefix('"');
            let name = name.and_then(|n| n.split_once('"')).map(|(n, _)| n.to_string());
            name.unwrap_or_else(|| panic!("{file}: a `fault!` site whose first argument is not its name"))
        };
        code.split(SITE).skip(1).map(site).collect()
    }

    /// Every fault named at a site in the checker's sources.
    fn used() -> BTreeSet<String> {
        fn walk(dir: &Path, out: &mut BTreeSet<String>) {
            for e in std::fs::read_dir(dir).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, out);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    let text = std::fs::read_to_string(&p).unwrap();
                    out.extend(sites(&p.display().to_string(), &text));
                }
            }
        }
        let mut out = BTreeSet::new();
        walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut out);
        out
    }

    #[test]
    fn the_catalogue_is_the_code() {
        // The implementation faults have sites too (xtask/tests/faults.rs holds them to theirs).
        let names = CATALOGUE.iter().map(|m| m.name).chain(FAULTS.iter().map(|f| f.name));
        let listed: BTreeSet<String> = names.map(String::from).collect();
        assert_eq!(listed.len(), CATALOGUE.len() + FAULTS.len(), "a name is listed twice");
        let used = used();
        let unused: Vec<_> = listed.difference(&used).collect();
        let unlisted: Vec<_> = used.difference(&listed).collect();
        assert!(unused.is_empty(), "listed but never used: {unused:?}");
        assert!(unlisted.is_empty(), "used but not listed: {unlisted:?}");
        assert!(CATALOGUE.len() >= 100);
    }

    #[test]
    fn off_without_the_variable() {
        // The test process never sets WAI_MUTANT, so even the mutants build acts as the checker.
        assert!(CATALOGUE.iter().all(|m| !active(m.name)));
        assert!(FAULTS.iter().all(|f| !active(f.name)));
    }
}
