//! The floating-point environment a nonempty execution needs (seeds/detessdequant.md, "Nonempty
//! execution requires nearest rounding, gradual FP32 underflow and masked FP exception traps"):
//! read, never written ("it never changes the thread's mode").
//!
//! - x86-64: MXCSR rounding control (bits 13–14) 00, FTZ (bit 15) and DAZ (bit 6) clear, the six
//!   exception masks (bits 7–12) set; the x87 control word's rounding control (bits 10–11) 00 and
//!   its six exception masks (bits 0–5) set.
//! - aarch64: FPCR.RMode (bits 22–23) 00, FZ (bit 24) clear, FIZ (bit 0) clear, the trap enables
//!   IOE, DZE, OFE, UFE, IXE (bits 8–12) and IDE (bit 15) clear.
//! - Any other ISA is refused.
//!
//! The registers are per thread, and a thread inherits its creator's. The CIS-2 code of this crate
//! ([`crate::cis2::env::pin`]) sets FTZ/DAZ on the threads it computes on and restores them when its
//! guard drops; whatever a thread's history, [`check`] reads the register at the moment of use and
//! refuses a mode that is not the default, so a leaked mode can never reach a DetessDequant vector.
//! After the register checks, [`self_test`] proves the facts on the hardware itself through
//! [`std::hint::black_box`].

use std::hint::black_box;
use std::marker::PhantomData;

/// Proof that the calling thread's environment was checked; it cannot leave the thread.
pub struct Checked {
    _thread: PhantomData<*const ()>,
}

#[cfg(target_arch = "x86_64")]
fn registers() -> Result<(), String> {
    use std::arch::asm;
    let mut mxcsr: u32 = 0;
    let mut cw: u16 = 0;
    // SAFETY: stmxcsr stores the 32-bit MXCSR into the pointed-to, writable u32; fnstcw stores the
    // 16-bit x87 control word into the pointed-to, writable u16. Neither changes any state.
    unsafe {
        asm!("stmxcsr [{p}]", p = in(reg) &mut mxcsr as *mut u32, options(nostack, preserves_flags));
        asm!("fnstcw [{p}]", p = in(reg) &mut cw as *mut u16, options(nostack, preserves_flags));
    }
    let mut wrong = Vec::new();
    if mxcsr & (0b11 << 13) != 0 {
        wrong.push("MXCSR rounding control (bits 13-14) is not round to nearest");
    }
    if mxcsr & (1 << 15) != 0 {
        wrong.push("MXCSR FTZ (bit 15) is set");
    }
    if mxcsr & (1 << 6) != 0 {
        wrong.push("MXCSR DAZ (bit 6) is set");
    }
    if mxcsr & (0b11_1111 << 7) != 0b11_1111 << 7 {
        wrong.push("an MXCSR exception mask (bits 7-12) is clear");
    }
    if cw & (0b11 << 10) != 0 {
        wrong.push("x87 rounding control (bits 10-11) is not round to nearest");
    }
    if cw & 0b11_1111 != 0b11_1111 {
        wrong.push("an x87 exception mask (bits 0-5) is clear");
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} (MXCSR {mxcsr:#06x}, x87 control word {cw:#06x})",
            wrong.join("; ")
        ))
    }
}

#[cfg(target_arch = "aarch64")]
fn registers() -> Result<(), String> {
    use std::arch::asm;
    let fpcr: u64;
    // SAFETY: reading FPCR has no side effect.
    unsafe {
        asm!("mrs {v}, fpcr", v = out(reg) fpcr, options(nomem, nostack, preserves_flags));
    }
    let mut wrong = Vec::new();
    if fpcr & (0b11 << 22) != 0 {
        wrong.push("FPCR.RMode (bits 22-23) is not round to nearest");
    }
    if fpcr & (1 << 24) != 0 {
        wrong.push("FPCR.FZ (bit 24) is set");
    }
    if fpcr & 1 != 0 {
        wrong.push("FPCR.FIZ (bit 0) is set");
    }
    if fpcr & ((0b1_1111 << 8) | (1 << 15)) != 0 {
        wrong.push("an FPCR trap enable (bits 8-12, 15) is set");
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(format!("{} (FPCR {fpcr:#x})", wrong.join("; ")))
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn registers() -> Result<(), String> {
    Err(format!(
        "the checker reads the floating-point environment of x86-64 and aarch64 only, not of {}",
        std::env::consts::ARCH
    ))
}

/// The facts the numerical core relies on, computed by the hardware: gradual underflow (no FTZ),
/// subnormal operands read as they are (no DAZ), round to nearest with ties to even in addition and
/// in the int32 → binary32 conversion.
pub fn self_test() -> Result<(), String> {
    let cases: [(&str, f32, u32); 9] = [
        // 2^-126 · 0.5 = 2^-127, a subnormal: 0x00400000 (FTZ would give +0).
        (
            "2^-126 * 0.5",
            black_box(f32::from_bits(0x0080_0000)) * black_box(0.5f32),
            0x0040_0000,
        ),
        // 2^-149 · 2^24 = 2^-125 = 0x01000000 (DAZ would read 2^-149 as 0).
        (
            "2^-149 * 2^24",
            black_box(f32::from_bits(1)) * black_box(16_777_216.0f32),
            0x0100_0000,
        ),
        // 2^-149 − 2^-148 = −2^-149 (DAZ or FTZ would give a zero).
        (
            "2^-149 - 2^-148",
            black_box(f32::from_bits(1)) - black_box(f32::from_bits(2)),
            0x8000_0001,
        ),
        // 1 + 1.5·2^-24: nearest is 1 + 2^-23 (toward zero or down would keep 1).
        (
            "1 + 1.5*2^-24",
            black_box(1.0f32) + black_box(f32::from_bits(0x33c0_0000)),
            0x3f80_0001,
        ),
        // −1 − 1.5·2^-24: nearest is −(1 + 2^-23) (up would keep −1).
        (
            "-1 - 1.5*2^-24",
            black_box(-1.0f32) - black_box(f32::from_bits(0x33c0_0000)),
            0xbf80_0001,
        ),
        // 1 + 2^-24 is a tie: even is 1.
        (
            "1 + 2^-24",
            black_box(1.0f32) + black_box(f32::from_bits(0x3380_0000)),
            0x3f80_0000,
        ),
        // 2^24 + 1 is a tie: even is 2^24 = 0x4b800000.
        ("(float)16777217", black_box(16_777_217i32) as f32, 0x4b80_0000),
        // 2^24 + 3 is a tie: even is 2^24 + 4 = 0x4b800002.
        ("(float)16777219", black_box(16_777_219i32) as f32, 0x4b80_0002),
        // 2^31 − 1 rounds to 2^31 = 0x4f000000.
        ("(float)2147483647", black_box(i32::MAX) as f32, 0x4f00_0000),
    ];
    for (what, got, want) in cases {
        if got.to_bits() != want {
            return Err(format!("self-test: {what} = {:#010x}, not {want:#010x}", got.to_bits()));
        }
    }
    Ok(())
}

/// Checks the calling thread's environment before arithmetic; the error says why the checker
/// refuses to compute (it is not a vector).
pub fn check() -> Result<Checked, String> {
    let refuse = |why: String| {
        format!(
            "floating-point environment: {why}: DetessDequant needs round to nearest, gradual underflow and \
             masked traps, and the checker never changes the thread's mode: refusing to compute"
        )
    };
    registers().map_err(refuse)?;
    self_test().map_err(refuse)?;
    Ok(Checked { _thread: PhantomData })
}
