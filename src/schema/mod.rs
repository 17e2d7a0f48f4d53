//! Structural schemas of custom resources: compiled once per CRD version, applied on every
//! write (prune -> drop non-nullable nulls -> default -> validate).
