//! Kinds of `storage.k8s.io`.

pub mod csidriver;
pub mod csinode;
pub mod csistoragecapacity;
pub mod storageclass;
pub mod volumeattachment;
pub mod volumeattributesclass;
