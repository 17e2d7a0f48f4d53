//! The generic registry: one store implementation of every verb for every resource, the
//! per-kind strategies that plug into it, and the catalog of served resources.

pub mod admissionregistration;
pub mod apiextensions;
pub mod apiregistration;
pub mod apps;
pub mod authentication;
pub mod authorization;
pub mod autoscaling;
pub mod batch;
pub mod builtin;
pub mod catalog;
pub mod certificates;
pub mod coordination;
pub mod core;
pub mod discovery;
pub mod dra;
pub mod events;
pub mod field_managers;
pub mod flowcontrol;
pub mod jsonpath;
pub mod networking;
pub mod node;
pub mod object_meta;
pub mod pointer;
pub mod policy;
pub mod rbac;
pub mod resource;
pub mod scale;
pub mod scheduling;
pub mod storage;
pub mod store;
pub mod strategy;
pub mod table;
pub mod validation;
