//! Kinds of `policy`.

pub mod poddisruptionbudget;
