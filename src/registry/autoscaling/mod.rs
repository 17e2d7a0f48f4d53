//! Kinds of the `autoscaling` group.

pub mod horizontalpodautoscaler;
pub mod horizontalpodautoscaler_v1;
pub mod hpa_conversion;
