//! Kinds of the `autoscaling` group.

pub mod horizontalpodautoscaler;
