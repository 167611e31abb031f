//! Resource limits (docs/fuzzing.md, "Memory and time bounds"): the largest legal graph runs
//! within the stated memory bound on both implementations, one element past it is refused before
//! anything of its size exists, and the grader bounds a misbehaving implementation's time and
//! output.
//!
//! An allocator that tracks the bytes live at once measures the peak of each run.

use serde_json::{Value, json};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use wai_oracle::whg1::build::Builder;
use wai_oracle::whg1::{Crop, Op, Operand, Policy};

struct Peak;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

unsafe impl GlobalAlloc for Peak {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        grew(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Peak = Peak;

/// Tests in this file measure one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The most bytes live at once while `f` runs, above what was live before, with its result.
fn peak<T>(f: impl FnOnce() -> T) -> (usize, T) {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let out = f();
    (PEAK.load(Ordering::Relaxed) - before, out)
}

const MIB: usize = 1 << 20;
/// §3: no tensor holds more than 2^26 elements.
const CAP: usize = 1 << 26;

/// A `[1, 1, 1]` input replicate-padded to a multiple of `m` (§5 `pad_rep`), `[1, m, m]`, then
/// cropped to its top-left element, as a graph vector request with input value 3.
fn padded_then_cropped(m: u32) -> String {
    let mut b = Builder::new();
    let x = b.input(1, Policy::Check { lo: -8, hi: 8 });
    let padded = b.op(Op::PadRep { m }, &[x], 1);
    let crop = Crop {
        y0: Operand::Const(0),
        x0: Operand::Const(0),
        h: Operand::Const(1),
        w: Operand::Const(1),
    };
    let y = b.op(Op::Crop(crop), &[padded], 1);
    b.output(y);
    let graph = wai_oracle::whg1::write::write(&b.build());
    json!({
        "decodes": [{ "inputs": [{ "data": ["3"], "shape": ["1", "1", "1"] }], "scalars": [] }],
        "graph": hex::encode(graph),
        "id": "resources",
    })
    .to_string()
}

fn oracle(line: &str) -> String {
    wai_oracle::fill::fill_line_in(line, None).expect("the oracle fills the request")
}

fn checker(line: &str) -> String {
    match wai_checker::fill::fill_line(line) {
        Ok(filled) => filled,
        Err(_) => panic!("the checker calls the request a line error"),
    }
}

fn expect(filled: &str) -> Value {
    let v: Value = serde_json::from_str(filled).expect("a filled line is JSON");
    v["decodes"][0]["expect"].clone()
}

#[test]
fn the_largest_legal_tensor_runs_within_the_stated_bound_on_both_sides() {
    // m = 8192: [1, 8192, 8192] is exactly 2^26 elements, the largest tensor the cap allows.
    let _guard = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let line = padded_then_cropped(8192);
    let (oracle_peak, filled) = peak(|| oracle(&line));
    assert_eq!(expect(&filled)["outputs"][0]["data"], json!(["3"]), "{filled}");
    let (checker_peak, theirs) = peak(|| checker(&line));
    assert_eq!(filled.trim_end(), theirs);
    // docs/fuzzing.md: the oracle at most 64 bytes, the checker at most 16 bytes per element
    // of the cap, plus 64 MiB.
    assert!(oracle_peak <= 64 * CAP + 64 * MIB, "oracle peak {oracle_peak}");
    assert!(checker_peak <= 16 * CAP + 64 * MIB, "checker peak {checker_peak}");
}

#[test]
fn one_row_past_the_cap_is_refused_before_it_exists_on_both_sides() {
    // m = 8193: [1, 8193, 8193] is 67,125,249 > 2^26 elements: too_large.
    let _guard = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let line = padded_then_cropped(8193);
    let (oracle_peak, filled) = peak(|| oracle(&line));
    assert_eq!(expect(&filled)["refuse"], json!("too_large"), "{filled}");
    let (checker_peak, theirs) = peak(|| checker(&line));
    assert_eq!(filled.trim_end(), theirs);
    assert!(oracle_peak < MIB, "oracle peak {oracle_peak}");
    assert!(checker_peak < MIB, "checker peak {checker_peak}");
}

/// Whether process `pid` is gone (or a zombie awaiting its reaper), waiting up to 5 s.
fn gone(pid: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(stat) if stat.rsplit(')').next().is_some_and(|r| r.trim_start().starts_with('Z')) => return true,
            Ok(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    false
}

#[test]
fn the_grader_stops_a_hung_implementation_and_what_it_started_at_its_timeout() {
    // The shell starts a child that would sleep for a minute, prints its pid and waits: the
    // timeout kills both (the whole process group), and what was printed is kept.
    let _guard = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let tree = std::env::temp_dir();
    let hang = "sleep 60 & echo $!; wait";
    let (out, ending) = xtask::grade::run(hang, &tree, b"{}\n".to_vec(), Duration::from_millis(300), vec![MIB]);
    assert_eq!(ending, xtask::grade::Ending::TimedOut);
    let [xtask::grade::Answer::Line(pid)] = &out[..] else {
        panic!("{out:?}")
    };
    let pid = String::from_utf8(pid.clone()).expect("a pid");
    assert!(!pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()), "{pid:?}");
    assert!(gone(&pid), "the implementation's child {pid} outlived the timeout");
}

#[test]
fn the_grader_keeps_one_line_per_record_of_an_endless_output() {
    // `yes` writes lines forever: the grader keeps one per record (three here), reads the rest
    // and drops it, and stops it at the timeout.
    let _guard = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let tree = std::env::temp_dir();
    let (grader_peak, (out, ending)) =
        peak(|| xtask::grade::run("yes", &tree, vec![], Duration::from_millis(500), vec![MIB; 3]));
    assert_eq!(ending, xtask::grade::Ending::TimedOut);
    assert_eq!(out, vec![xtask::grade::Answer::Line(b"y".to_vec()); 3]);
    assert!(grader_peak < 8 * MIB, "grader peak {grader_peak}");
}

#[test]
fn the_grader_holds_an_endless_line_to_its_record_allowance() {
    // One line that never ends: no more than its record's allowance of it is held (1 MiB here).
    let _guard = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let tree = std::env::temp_dir();
    let (grader_peak, (out, ending)) =
        peak(|| xtask::grade::run("cat /dev/zero", &tree, vec![], Duration::from_millis(500), vec![MIB]));
    assert_eq!(ending, xtask::grade::Ending::TimedOut);
    assert_eq!(out, [xtask::grade::Answer::TooLong { cap: MIB }]);
    assert!(grader_peak < 8 * MIB, "grader peak {grader_peak}");
}
