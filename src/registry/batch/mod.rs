//! Kinds of the `batch` group, and the cron schedules CronJobs accept ([`cron`]).

pub mod cron;
pub mod cronjob;
pub mod job;
