//! The input layouts (docs/assumptions.md D4, D5) and the output placement (D6).
//!
//! Both input layouts are a sequence of **slices** (one per combination of the outer axes' indices,
//! logical row-major order), each a sequence of **tiles** in tile order (C tile outermost, then D,
//! H, W), each tile `span` bytes long. Along each axis the tiles are `⌊X/T⌋` full tiles of extent `T`
//! and, when `T` does not divide `X`, one last tile of extent `X mod T`. They differ in a tile's
//! in-tile offset and span:
//!
//! | | in-tile offset of local pixel `p`, channel `c` | span |
//! |---|---|---|
//! | `MlaTiled`, `Compact` | `p·ac + c` | `⌈P·ac/16⌉·16` |
//! | `MlaTiled`, `Pad16` | `p·⌈ac/16⌉·16 + c` | `P·⌈ac/16⌉·16` |
//! | `MlaCBlocked` | `16·((c div 16)·P + p) + c mod 16` | `⌈ac/16⌉·16·P` |
//!
//! (`P` the tile's pixel count, `ac` its actual channel count, pixels row-major in `(d, h, w)`.)
//! The needed input size is a closed form over the at most two tile extents per axis; the walk
//! ([`InGeom::walk`]) visits every logical element in physical order and ends where the closed form
//! says.

/// Which input layout, with what a tile's storage depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `MlaTiled`; `pad16`: each pixel's channels padded to a multiple of 16.
    Tiled { pad16: bool },
    /// `MlaCBlocked`: channel blocks of 16, each block pixel-major.
    CBlocked,
}

/// An admitted input layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InGeom {
    pub kind: Kind,
    /// The logical axis of D, H, W and C (`None`: unmapped, extent 1). C is always mapped.
    pub axes: [Option<usize>; 4],
    /// The tile extents of D, H, W and C (`MlaCBlocked`: D's is 1), each at least 1.
    pub tile: [u64; 4],
    /// The outer axes: every logical axis not in `axes`, ascending.
    pub outer: Vec<usize>,
}

fn round16(x: u128) -> Option<u128> {
    Some(x.checked_add(15)? / 16 * 16)
}

/// The tiles along an axis of extent `x ≥ 1` cut by `t ≥ 1`: `(count, actual extent)` of the full
/// tiles and of the last partial one (count 0 when absent).
fn cuts(x: u64, t: u64) -> [(u64, u64); 2] {
    [(x / t, t), (u64::from(!x.is_multiple_of(t)), x % t)]
}

impl InGeom {
    /// The extents of D, H, W and C in `shape`.
    pub fn extents(&self, shape: &[u64]) -> [u64; 4] {
        self.axes.map(|a| a.map_or(1, |a| shape[a]))
    }

    /// Bytes each pixel of a tile with `ac` actual channels stores (`MlaTiled`).
    fn stored(&self, ac: u128) -> Option<u128> {
        match self.kind {
            Kind::Tiled { pad16: true } => round16(ac),
            _ => Some(ac),
        }
    }

    /// A tile's span: `pixels` pixels of `ac` channels.
    fn span(&self, pixels: u128, ac: u128) -> Option<u128> {
        match self.kind {
            Kind::Tiled { .. } => round16(pixels.checked_mul(self.stored(ac)?)?),
            Kind::CBlocked => round16(ac)?.checked_mul(pixels),
        }
    }

    /// The byte offset of local pixel `p`, local channel `c` in a tile of `pixels` pixels and `ac`
    /// channels.
    fn in_tile(&self, p: u128, c: u128, pixels: u128, ac: u128) -> Option<u128> {
        match self.kind {
            Kind::Tiled { .. } => p.checked_mul(self.stored(ac)?)?.checked_add(c),
            Kind::CBlocked => 16u128
                .checked_mul((c / 16).checked_mul(pixels)?.checked_add(p)?)?
                .checked_add(c % 16),
        }
    }

    /// The input size the layout needs (D4: the slices' total); `None` when it passes u128 (and so
    /// 2^64). An empty tensor needs 0 bytes: an axis of extent 0 has no tiles, an outer axis of
    /// extent 0 no slices.
    pub fn size(&self, shape: &[u64]) -> Option<u128> {
        if shape.contains(&0) {
            return Some(0);
        }
        let [d, h, w, c] = self.extents(shape);
        let [td, th, tw, tc] = self.tile;
        // Every term below is at most the total (every factor is at least 1), so an overflow of u128
        // means the total passes it too.
        let mut slice = 0u128;
        for (nc, ac) in cuts(c, tc) {
            for (nd, ad) in cuts(d, td) {
                for (nh, ah) in cuts(h, th) {
                    for (nw, aw) in cuts(w, tw) {
                        let n = u128::from(nc) * u128::from(nd);
                        let n = n.checked_mul(u128::from(nh))?.checked_mul(u128::from(nw))?;
                        if n == 0 {
                            continue;
                        }
                        let pixels = (u128::from(ad) * u128::from(ah)).checked_mul(u128::from(aw))?;
                        let span = self.span(pixels, u128::from(ac))?;
                        slice = slice.checked_add(n.checked_mul(span)?)?;
                    }
                }
            }
        }
        let slices = self
            .outer
            .iter()
            .try_fold(1u128, |n, &a| n.checked_mul(u128::from(shape[a])))?;
        slices.checked_mul(slice)
    }

    /// Visits every logical element of a nonempty tensor in physical order: `f(offset, coords)`
    /// with the element's input byte offset and logical coordinates. Returns the offset past the
    /// last slice (the needed size). For an admitted call, whose sizes fit 64 bits; an arithmetic
    /// overflow is reported as a bug.
    pub fn walk(&self, shape: &[u64], mut f: impl FnMut(u64, &[u64]) -> Result<(), String>) -> Result<u64, String> {
        let oops = || "the input walk passed 2^64 in an admitted call".to_string();
        if shape.contains(&0) {
            return Ok(0);
        }
        let [d, h, w, c] = self.extents(shape);
        let [td, th, tw, tc] = self.tile;
        let count = |x: u64, t: u64| x / t + u64::from(!x.is_multiple_of(t));
        let (n_c, n_d, n_h, n_w) = (count(c, tc), count(d, td), count(h, th), count(w, tw));
        let axis_c = self.axes[3].ok_or_else(oops)?;
        let mut coords = vec![0u64; shape.len()];
        let mut base: u128 = 0;
        // The outer axes as an odometer, last axis fastest (logical row-major order).
        loop {
            for ct in 0..n_c {
                let c0 = ct * tc;
                let ac = tc.min(c - c0);
                for dt in 0..n_d {
                    let d0 = dt * td;
                    let ad = td.min(d - d0);
                    for ht in 0..n_h {
                        let h0 = ht * th;
                        let ah = th.min(h - h0);
                        for wt in 0..n_w {
                            let w0 = wt * tw;
                            let aw = tw.min(w - w0);
                            let pixels = (u128::from(ad) * u128::from(ah))
                                .checked_mul(u128::from(aw))
                                .ok_or_else(oops)?;
                            // The local pixel index p counts (d, h, w) in row-major order.
                            let mut p: u128 = 0;
                            for ld in 0..ad {
                                for lh in 0..ah {
                                    for lw in 0..aw {
                                        for (k, v) in [(0, d0 + ld), (1, h0 + lh), (2, w0 + lw)] {
                                            if let Some(a) = self.axes[k] {
                                                coords[a] = v;
                                            }
                                        }
                                        for lc in 0..ac {
                                            coords[axis_c] = c0 + lc;
                                            let off = self
                                                .in_tile(p, u128::from(lc), pixels, u128::from(ac))
                                                .and_then(|o| o.checked_add(base))
                                                .and_then(|o| u64::try_from(o).ok())
                                                .ok_or_else(oops)?;
                                            f(off, &coords)?;
                                        }
                                        p += 1;
                                    }
                                }
                            }
                            let span = self.span(pixels, u128::from(ac)).ok_or_else(oops)?;
                            base = base.checked_add(span).ok_or_else(oops)?;
                        }
                    }
                }
            }
            // The next slice.
            let mut k = self.outer.len();
            loop {
                if k == 0 {
                    return u64::try_from(base).map_err(|_| oops());
                }
                k -= 1;
                let a = self.outer[k];
                coords[a] += 1;
                if coords[a] < shape[a] {
                    break;
                }
                coords[a] = 0;
            }
        }
    }
}

/// D6: the addressed span of an output of `shape` with byte `strides` and scalar `width`: 0 for an
/// empty tensor, else `width + Σ (extent − 1)·stride`; `None` when it passes u128.
pub fn out_span(width: u64, shape: &[u64], strides: &[u64]) -> Option<u128> {
    if shape.contains(&0) {
        return Some(0);
    }
    shape.iter().zip(strides).try_fold(u128::from(width), |s, (&e, &st)| {
        s.checked_add(u128::from(e - 1).checked_mul(u128::from(st))?)
    })
}

/// D6: `Contiguous` is row-major with no gaps: the byte strides of `shape` for scalar `width`;
/// `None` when one passes 2^64 (for a nonempty tensor its span does too; an empty tensor never
/// uses its strides).
pub fn contiguous_strides(width: u64, shape: &[u64]) -> Option<Vec<u64>> {
    let mut strides = vec![0u64; shape.len()];
    let mut s = width;
    for k in (0..shape.len()).rev() {
        strides[k] = s;
        if k > 0 {
            s = s.checked_mul(shape[k])?;
        }
    }
    Some(strides)
}
