//! CEL validation rules (placeholder while the module is written).
