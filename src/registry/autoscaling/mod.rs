//! Kinds of the `autoscaling` group.

pub mod horizontalpodautoscaler;
pub mod hpa_conversion;
