//! Kinds of the core (legacy, `/api/v1`) group.

pub mod componentstatus;
pub mod configmap;
pub mod endpoints;
pub mod event;
pub mod limitrange;
pub mod namespace;
pub mod node;
pub mod persistentvolume;
pub mod persistentvolumeclaim;
pub mod pod;
pub mod podspec;
pub mod podtemplate;
pub mod proxy;
pub mod replicationcontroller;
pub mod resourcequota;
pub mod secret;
pub mod service;
pub mod service_alloc;
pub mod service_validation;
pub mod serviceaccount;
pub mod serviceaccount_token;
