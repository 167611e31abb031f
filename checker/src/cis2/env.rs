//! §1.3: the floating-point environment, pinned per thread.
//!
//! [`pin`] sets FTZ and DAZ (x86-64: MXCSR bits 15 and 6; aarch64: FPCR.FZ, bit 24) by a
//! read-modify-write of the control register with inline assembly, reads the register back and
//! checks the bits (and that rounding is to nearest even, §1.2), then runs §1.3's adversarial
//! self-test through [`std::hint::black_box`]. The returned [`Pinned`] restores the caller's register
//! when dropped. The control registers are per thread: every thread that computes pins for itself.
//! Any other target is refused at run time.

use std::hint::black_box;
use std::marker::PhantomData;

/// The pinned environment of the current thread; dropping it restores the register as it was.
pub struct Pinned {
    saved: u64,
    /// The register belongs to the thread that pinned it.
    _thread: PhantomData<*const ()>,
}

impl Drop for Pinned {
    fn drop(&mut self) {
        #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
        reg::write(self.saved);
    }
}

#[cfg(target_arch = "x86_64")]
mod reg {
    use std::arch::asm;

    /// MXCSR FTZ (bit 15) and DAZ (bit 6).
    pub const BITS: u64 = (1 << 15) | (1 << 6);
    /// MXCSR RC, bits 13–14: 00 is round to nearest even.
    pub const ROUNDING: u64 = 0b11 << 13;
    pub const WHAT: &str = "MXCSR FTZ (bit 15) and DAZ (bit 6)";

    pub fn read() -> u64 {
        let mut v: u32 = 0;
        // SAFETY: stmxcsr stores the 32-bit MXCSR into the pointed-to, writable u32.
        unsafe {
            asm!("stmxcsr [{p}]", p = in(reg) &mut v as *mut u32, options(nostack, preserves_flags));
        }
        u64::from(v)
    }

    pub fn write(v: u64) {
        let v = v as u32;
        // SAFETY: ldmxcsr loads MXCSR from the pointed-to u32; every value written here is one read
        // from MXCSR with FTZ/DAZ changed, so no reserved bit is set.
        unsafe {
            asm!("ldmxcsr [{p}]", p = in(reg) &v as *const u32, options(nostack, preserves_flags, readonly));
        }
    }
}

#[cfg(target_arch = "aarch64")]
mod reg {
    use std::arch::asm;

    /// FPCR.FZ (bit 24); FZ16 (bit 19) is left as it is (§1.3).
    pub const BITS: u64 = 1 << 24;
    /// FPCR.RMode, bits 22–23 (00 is round to nearest even), and FPCR.AH (bit 1: with AH = 1,
    /// FZ's tininess rule changes, SPEC-NOTES 15).
    pub const ROUNDING: u64 = (0b11 << 22) | (1 << 1);
    pub const WHAT: &str = "FPCR.FZ (bit 24)";

    pub fn read() -> u64 {
        let v: u64;
        // SAFETY: reading FPCR has no side effect.
        unsafe {
            asm!("mrs {v}, fpcr", v = out(reg) v, options(nomem, nostack, preserves_flags));
        }
        v
    }

    pub fn write(v: u64) {
        // SAFETY: every value written is one read from FPCR with FZ changed.
        unsafe {
            asm!("msr fpcr, {v}", v = in(reg) v, options(nomem, nostack, preserves_flags));
        }
    }
}

/// Pins FTZ/DAZ on the current thread, checks the readback and runs the self-test.
pub fn pin() -> Result<Pinned, String> {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        let saved = reg::read();
        reg::write(saved | reg::BITS);
        let guard = Pinned {
            saved,
            _thread: PhantomData,
        };
        let now = reg::read();
        if now & reg::BITS != reg::BITS {
            return Err(format!(
                "§1.3: {} did not read back as set (register {now:#x})",
                reg::WHAT
            ));
        }
        if now & reg::ROUNDING != 0 {
            return Err(format!(
                "§1.2: the rounding control is not round-to-nearest-even (register {now:#x})"
            ));
        }
        self_test()?;
        Ok(guard)
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        Err(format!(
            "§1.3: CIS-2 defines FTZ/DAZ only for x86-64 and aarch64, not for {}: refusing to compute",
            std::env::consts::ARCH
        ))
    }
}

/// §1.3's adversarial self-test, and three more facts the suites rely on: DAZ itself (a subnormal
/// operand read as zero, which the spec's sum with `+0.0` cannot tell from FTZ alone) and the
/// host's tininess rule (docs/assumptions.md C1), which [`super::arith`] takes as native.
pub fn self_test() -> Result<(), String> {
    let a = black_box(f32::MIN_POSITIVE) * black_box(1.0e-10f32);
    if a.to_bits() != 0 {
        return Err(format!(
            "§1.3 self-test: 2^-126 * 1e-10 = {:#010x}, not +0.0",
            a.to_bits()
        ));
    }
    let b = black_box(f32::from_bits(1)) + black_box(0.0f32);
    if b.to_bits() != 0 {
        return Err(format!(
            "§1.3 self-test: 0x00000001 + 0.0 = {:#010x}, not +0.0",
            b.to_bits()
        ));
    }
    let c = black_box(f32::from_bits(1)) * black_box(16_777_216.0f32);
    if c.to_bits() != 0 {
        return Err(format!(
            "§1.3 self-test: 0x00000001 * 2^24 = {:#010x}, not +0.0 (DAZ is not in effect)",
            c.to_bits()
        ));
    }
    #[cfg(target_arch = "x86_64")]
    if black_box(f32::from_bits(0x8000_0001)) != black_box(0.0f32) {
        return Err("§1.3 self-test: a subnormal does not compare equal to zero (DAZ)".into());
    }
    let t = black_box(f32::from_bits(0x2000_0001)) * black_box(f32::from_bits(0x1fff_fffe));
    let want = if super::arith::HOST_AFTER { 0x0080_0000 } else { 0 };
    if t.to_bits() != want {
        return Err(format!(
            "§1.3 self-test: 0x20000001 * 0x1ffffffe = {:#010x}, not the host's tininess rule's {want:#010x}",
            t.to_bits()
        ));
    }
    Ok(())
}
