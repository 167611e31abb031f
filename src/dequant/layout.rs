//! The input layouts: `MlaTiled` (docs/assumptions.md D4) and `MlaCBlocked` (D5). PROVISIONAL: the
//! seed gives tile order, tile bases, span alignment and channel padding in prose; only
//! MlaCBlocked's in-tile offset `16·((c/16)·P + p) + c mod 16` is a formula there.

use num_bigint::BigInt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channels {
    Compact,
    Pad16,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Tiled(Channels),
    CBlocked,
}

/// A tiled input's geometry: the outer axes, and for each of D, H, W, C the logical axis it maps
/// (or none, extent 1) and its tile extent.
#[derive(Clone, Debug)]
pub struct Geometry {
    shape: Vec<u64>,
    outer: Vec<usize>,
    volume: [Option<usize>; 4],
    tile: [u64; 4],
    kind: Kind,
}

fn round_up16(n: u128) -> u128 {
    n.div_ceil(16) * 16
}

impl Geometry {
    /// `MlaTiled{axes, tile_shape, channels}`, with `axes` checked (C mapped, distinct, in range).
    pub fn tiled(shape: &[u64], axes: [Option<usize>; 4], tile: [u64; 4], channels: Channels) -> Geometry {
        Geometry::new(shape, axes, tile, Kind::Tiled(channels))
    }

    /// `MlaCBlocked{tile_h, tile_w, tile_c}` over a rank 3–6 shape: the last three axes are H, W, C.
    pub fn cblocked(shape: &[u64], tile: [u64; 3]) -> Geometry {
        let r = shape.len();
        Geometry::new(
            shape,
            [None, Some(r - 3), Some(r - 2), Some(r - 1)],
            [1, tile[0], tile[1], tile[2]],
            Kind::CBlocked,
        )
    }

    fn new(shape: &[u64], volume: [Option<usize>; 4], tile: [u64; 4], kind: Kind) -> Geometry {
        let outer = (0..shape.len()).filter(|a| !volume.contains(&Some(*a))).collect();
        Geometry {
            shape: shape.to_vec(),
            outer,
            volume,
            tile,
            kind,
        }
    }

    /// The extent of volume axis `k` (D, H, W, C): its logical axis's, or 1.
    fn extent(&self, k: usize) -> u64 {
        self.volume[k].map_or(1, |a| self.shape[a])
    }

    /// The bytes of a tile with actual extents `a` (D, H, W, C).
    fn span(&self, a: [u128; 4]) -> u128 {
        let pixels = a[0] * a[1] * a[2];
        match self.kind {
            Kind::Tiled(Channels::Compact) => round_up16(pixels * a[3]),
            Kind::Tiled(Channels::Pad16) => round_up16(pixels * round_up16(a[3])),
            Kind::CBlocked => a[3].div_ceil(16) * 16 * pixels,
        }
    }

    /// The input bytes a call needs: every slice's tiles' spans (D4, D5). Each axis has at most two
    /// tile extents (full, and the last partial one), so the sum runs over at most 16 kinds of tile.
    pub fn required(&self) -> BigInt {
        let per_axis: Vec<Vec<(u64, u64)>> = (0..4)
            .map(|k| {
                let (e, t) = (self.extent(k), self.tile[k]);
                let mut kinds = vec![(e / t, t)];
                if e % t != 0 {
                    kinds.push((1, e % t));
                }
                kinds
            })
            .collect();
        let mut slice = BigInt::ZERO;
        for d in &per_axis[0] {
            for h in &per_axis[1] {
                for w in &per_axis[2] {
                    for c in &per_axis[3] {
                        let count = BigInt::from(d.0) * h.0 * w.0 * c.0;
                        let span = self.span([d.1, h.1, w.1, c.1].map(u128::from));
                        slice += count * span;
                    }
                }
            }
        }
        let slices: BigInt = self.outer.iter().map(|&a| BigInt::from(self.shape[a])).product();
        slices * slice
    }

    /// The byte offset of each logical element, in logical row-major order. Called only after the
    /// checks, on a tensor whose elements fit the caps.
    pub fn offsets(&self) -> Vec<u128> {
        if self.shape.contains(&0) {
            return vec![]; // nothing to read, however many tiles the other axes would have
        }
        let n: Vec<u64> = (0..4).map(|k| self.extent(k).div_ceil(self.tile[k])).collect();
        let actual = |k: usize, t: u64| u128::from(self.tile[k].min(self.extent(k) - t * self.tile[k]));
        // Tile bases within a slice, in tile order: C outermost, then D, H, W.
        let mut bases = Vec::new();
        let mut at = 0u128;
        for ct in 0..n[3] {
            for dt in 0..n[0] {
                for ht in 0..n[1] {
                    for wt in 0..n[2] {
                        bases.push(at);
                        at += self.span([actual(0, dt), actual(1, ht), actual(2, wt), actual(3, ct)]);
                    }
                }
            }
        }
        let slice_bytes = at;
        let count: u64 = self.shape.iter().product();
        let mut out = Vec::with_capacity(count as usize);
        let mut index = vec![0u64; self.shape.len()];
        for _ in 0..count {
            let outer = self
                .outer
                .iter()
                .fold(0u128, |s, &a| s * u128::from(self.shape[a]) + u128::from(index[a]));
            let v: Vec<u64> = (0..4).map(|k| self.volume[k].map_or(0, |a| index[a])).collect();
            let t: Vec<u64> = (0..4).map(|k| v[k] / self.tile[k]).collect();
            let l: Vec<u128> = (0..4).map(|k| u128::from(v[k] % self.tile[k])).collect();
            let a: Vec<u128> = (0..4).map(|k| actual(k, t[k])).collect();
            let tile = (((t[3] * n[0] + t[0]) * n[1] + t[1]) * n[2] + t[2]) as usize;
            let within = match self.kind {
                Kind::Tiled(channels) => {
                    let stored = if channels == Channels::Pad16 {
                        round_up16(a[3])
                    } else {
                        a[3]
                    };
                    ((l[0] * a[1] + l[1]) * a[2] + l[2]) * stored + l[3]
                }
                // The seed's formula, with P = actual_h · actual_w and p row-major (h, w).
                Kind::CBlocked => {
                    let (p_count, p) = (a[1] * a[2], l[1] * a[2] + l[2]);
                    16 * ((l[3] / 16) * p_count + p) + l[3] % 16
                }
            };
            out.push(outer * slice_bytes + bases[tile] + within);
            // The next index in row-major order.
            for k in (0..index.len()).rev() {
                index[k] += 1;
                if index[k] < self.shape[k] {
                    break;
                }
                index[k] = 0;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_example() {
        // [2, 3], axes {−1, −1, 0, 1}: W is axis 0, C axis 1; one tile of 2 pixels × 3 channels,
        // 6 bytes in a 16-byte span; element (w, c) at 3w + c.
        let g = Geometry::tiled(&[2, 3], [None, None, Some(0), Some(1)], [1, 1, 2, 3], Channels::Compact);
        assert_eq!(g.required(), BigInt::from(16));
        assert_eq!(g.offsets(), vec![0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn tiles_channels_first_with_partial_tiles_and_padding() {
        // H = 3 (axis 0), C = 5 (axis 1); tiles 2 × 3: C tiles {3, 2}, H tiles {2, 1}.
        // Pad16: tile (c0, h0) 2 px · 16 = 32; (c0, h1) 16; (c1, h0) 32; (c1, h1) 16 → 96 bytes.
        let g = Geometry::tiled(&[3, 5], [None, Some(0), None, Some(1)], [1, 2, 1, 3], Channels::Pad16);
        assert_eq!(g.required(), BigInt::from(96));
        let o = g.offsets();
        // (h 0, c 0) at 0; (h 1, c 2) at 16 + 2; (h 2, c 0) in tile (c0, h1) at 32; (h 0, c 3) in
        // tile (c1, h0) at 48; (h 2, c 4) in (c1, h1) at 80 + 1.
        assert_eq!((o[0], o[7], o[10], o[3], o[14]), (0, 18, 32, 48, 81));
    }

    #[test]
    fn cblocked_offsets_follow_the_seed_formula() {
        // [1, 2, 2, 20] with tile {2, 2, 32}: one tile, P = 4, two channel blocks: (p, c) at
        // 16·((c/16)·4 + p) + c mod 16; the tile is 2 · 16 · 4 = 128 bytes.
        let g = Geometry::cblocked(&[1, 2, 2, 20], [2, 2, 32]);
        assert_eq!(g.required(), BigInt::from(128));
        let o = g.offsets();
        assert_eq!(o[17], 16 * 4 + 1); // (h 0, w 0, c 17): block 1, p = 0
        assert_eq!(o[20 * 3 + 5], 16 * 3 + 5); // (h 1, w 1, c 5): p = 3
    }
}
