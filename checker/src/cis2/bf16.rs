//! The model's matrices kept as their bf16 bits, in the model file's own buffer, and widened by
//! §4.1's shift where the matvec reads them.
//!
//! §4.2 widens every tensor at load time. The widening is exact and a function of the 16 bits
//! alone (no environment, no rounding: [`widen`] is [`super::artifact::widen_bf16`]), so widening a
//! value in a register each time it is read gives the binary32 value load-time widening stores, bit
//! for bit, subnormals included: a subnormal weight is widened to the same subnormal binary32 and
//! meets DAZ in the multiplication, as it would from memory. Half the bytes are read per pass.
//!
//! # Layout
//!
//! A `[rows, cols]` matrix keeps the `2·rows·cols` bytes it has in the file, its rows regrouped in
//! place ([`regroup`]) in blocks of [`BLOCK`] rows: in block `b` (rows `8b … 8b + 7`), row `8b + r`'s
//! element in column `i` is at byte `16·cols·b + 16·i + 2·r`, so one column of a block is sixteen
//! contiguous bytes, one bf16 value per row, little-endian. The last `rows mod 8` rows stay
//! row-major after the blocks (each block occupies the bytes its eight rows had).

use super::artifact::widen_bf16;

/// Rows per block.
pub const BLOCK: usize = 8;

/// §4.1 on the two little-endian bytes of one element.
#[inline(always)]
pub fn widen(lo: u8, hi: u8) -> f32 {
    widen_bf16(u16::from_le_bytes([lo, hi]))
}

/// One block column (sixteen bytes) widened: one value per row of the block.
#[inline(always)]
pub fn widen_column(c: &[u8; 2 * BLOCK]) -> [f32; BLOCK] {
    let mut w = [0.0f32; BLOCK];
    for (r, v) in w.iter_mut().enumerate() {
        *v = widen(c[2 * r], c[2 * r + 1]);
    }
    w
}

/// Regroups a row-major `[rows, cols]` matrix of bf16 bits (`bytes`, `2·rows·cols` long) in place
/// into the layout above.
pub fn regroup(bytes: &mut [u8], rows: usize, cols: usize) {
    assert_eq!(bytes.len(), 2 * rows * cols, "regroup: matrix size");
    let mut row_major = vec![0u8; 2 * BLOCK * cols];
    for block in bytes.chunks_exact_mut(2 * BLOCK * cols) {
        row_major.copy_from_slice(block);
        for (r, row) in row_major.chunks_exact(2 * cols).enumerate() {
            for (i, e) in row.chunks_exact(2).enumerate() {
                block[2 * BLOCK * i + 2 * r..2 * BLOCK * i + 2 * r + 2].copy_from_slice(e);
            }
        }
    }
}

/// A regrouped `[rows, cols]` matrix.
#[derive(Clone, Copy, Debug)]
pub struct Mat<'a> {
    pub bytes: &'a [u8],
    pub rows: usize,
    pub cols: usize,
}

impl<'a> Mat<'a> {
    pub fn new(bytes: &'a [u8], rows: usize, cols: usize) -> Mat<'a> {
        assert_eq!(bytes.len(), 2 * rows * cols, "bf16::Mat: matrix size");
        Mat { bytes, rows, cols }
    }

    /// The number of full blocks.
    pub fn blocks(&self) -> usize {
        self.rows / BLOCK
    }

    /// Block `b`'s bytes, column after column.
    pub fn block(&self, b: usize) -> &'a [u8] {
        let n = 2 * BLOCK * self.cols;
        &self.bytes[b * n..(b + 1) * n]
    }

    /// The bytes of row `o`, one of the rows after the last full block (row-major).
    pub fn tail_row(&self, o: usize) -> &'a [u8] {
        debug_assert!(o >= self.blocks() * BLOCK && o < self.rows);
        &self.bytes[2 * o * self.cols..2 * (o + 1) * self.cols]
    }

    /// Row `o`'s element in column `i`, widened.
    pub fn get(&self, o: usize, i: usize) -> f32 {
        let at = if o < self.blocks() * BLOCK {
            2 * BLOCK * self.cols * (o / BLOCK) + 2 * BLOCK * i + 2 * (o % BLOCK)
        } else {
            2 * (o * self.cols + i)
        };
        widen(self.bytes[at], self.bytes[at + 1])
    }

    /// Row `o`, widened.
    pub fn row(&self, o: usize) -> Vec<f32> {
        (0..self.cols).map(|i| self.get(o, i)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regrouped_elements_are_where_the_layout_says() {
        for (rows, cols) in [(1, 1), (7, 3), (8, 5), (19, 4), (24, 2)] {
            let row_major: Vec<u8> = (0..rows * cols)
                .flat_map(|k| u16::try_from(k * 7 + 1).unwrap().to_le_bytes())
                .collect();
            let mut bytes = row_major.clone();
            regroup(&mut bytes, rows, cols);
            let m = Mat::new(&bytes, rows, cols);
            for o in 0..rows {
                for i in 0..cols {
                    let k = o * cols + i;
                    let want = widen(row_major[2 * k], row_major[2 * k + 1]);
                    assert_eq!(m.get(o, i).to_bits(), want.to_bits(), "{rows}×{cols} ({o}, {i})");
                }
                if o >= m.blocks() * BLOCK {
                    assert_eq!(m.tail_row(o), &row_major[2 * o * cols..2 * (o + 1) * cols]);
                }
            }
            for b in 0..m.blocks() {
                for i in 0..cols {
                    let c: &[u8; 16] = m.block(b)[16 * i..16 * i + 16].try_into().unwrap();
                    let w = widen_column(c);
                    for (r, v) in w.iter().enumerate() {
                        assert_eq!(v.to_bits(), m.get(b * BLOCK + r, i).to_bits());
                    }
                }
            }
        }
    }
}
