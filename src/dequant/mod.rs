//! DetessDequant (seeds/detessdequant.md): MLA-tiled INT8 to FP32 or BF16, the layouts decoded and
//! the values dequantized in one pass.
//!
//! `numeric` is the contract's staged arithmetic (normative), on the exact software binary32 with
//! gradual underflow. `call` is a whole call: the checks in the order of docs/assumptions.md D3, the
//! input layouts (D4, D5: a reconstruction, PROVISIONAL beyond MlaCBlocked's in-tile offset), and the
//! output placement (D6).

pub mod call;
pub mod layout;
pub mod numeric;
