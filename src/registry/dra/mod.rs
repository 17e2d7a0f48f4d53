//! Kinds of `resource.k8s.io` (dynamic resource allocation), served at v1 only, as a default
//! 1.36 apiserver serves them: DeviceClasses, ResourceClaims (+status),
//! ResourceClaimTemplates and ResourceSlices. The folder is not named after the group:
//! [`crate::registry::resource`] is the generic registry's resource type.

pub mod deviceclass;
pub mod resourceclaim;
pub mod resourceclaimtemplate;
pub mod resourceslice;
pub mod shared;
