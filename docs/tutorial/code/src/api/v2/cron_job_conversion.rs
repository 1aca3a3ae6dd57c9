//! Conversion of CronJob between v2 (this version, a spoke) and v1 (the hub, the storage
//! version). The conversion webhook (`HubConverter` in `src/webhook/v1/cron_job.rs`) converts
//! every version through the hub, so a spoke converts only to and from the hub, both ways.

use crate::api::v1 as hub;

use super::CronSchedule;

// ANCHOR: to_hub
impl From<super::CronJob> for hub::CronJob {
    fn from(spoke: super::CronJob) -> Self {
        let spec = spoke.spec;
        hub::CronJob {
            metadata: spoke.metadata,
            spec: hub::CronJobSpec {
                schedule: spec.schedule.to_cron(),
                concurrency_policy: spec.concurrency_policy.map(|policy| match policy {
                    super::ConcurrencyPolicy::Allow => hub::ConcurrencyPolicy::Allow,
                    super::ConcurrencyPolicy::Forbid => hub::ConcurrencyPolicy::Forbid,
                    super::ConcurrencyPolicy::Replace => hub::ConcurrencyPolicy::Replace,
                }),
                suspend: spec.suspend,
                job_template: spec.job_template,
                successful_jobs_history_limit: spec.successful_jobs_history_limit,
                failed_jobs_history_limit: spec.failed_jobs_history_limit,
            },
            status: spoke.status.map(|status| hub::CronJobStatus {
                active: status.active,
                last_schedule_time: status.last_schedule_time,
                conditions: status.conditions,
            }),
        }
    }
}
// ANCHOR_END: to_hub

// ANCHOR: from_hub
impl From<hub::CronJob> for super::CronJob {
    fn from(hub: hub::CronJob) -> Self {
        let spec = hub.spec;
        super::CronJob {
            metadata: hub.metadata,
            spec: super::CronJobSpec {
                schedule: CronSchedule::from_cron(&spec.schedule),
                concurrency_policy: spec.concurrency_policy.map(|policy| match policy {
                    hub::ConcurrencyPolicy::Allow => super::ConcurrencyPolicy::Allow,
                    hub::ConcurrencyPolicy::Forbid => super::ConcurrencyPolicy::Forbid,
                    hub::ConcurrencyPolicy::Replace => super::ConcurrencyPolicy::Replace,
                }),
                suspend: spec.suspend,
                job_template: spec.job_template,
                successful_jobs_history_limit: spec.successful_jobs_history_limit,
                failed_jobs_history_limit: spec.failed_jobs_history_limit,
            },
            status: hub.status.map(|status| super::CronJobStatus {
                active: status.active,
                last_schedule_time: status.last_schedule_time,
                conditions: status.conditions,
            }),
        }
    }
}
// ANCHOR_END: from_hub

// ANCHOR: schedule
impl CronSchedule {
    /// The five fields as one cron line; a field left out is `*`.
    pub fn to_cron(&self) -> String {
        [
            &self.minute,
            &self.hour,
            &self.day_of_month,
            &self.month,
            &self.day_of_week,
        ]
        .map(|field| field.as_deref().unwrap_or("*"))
        .join(" ")
    }

    /// The fields of a cron line; a `*` field is left out. A line that does not have five
    /// fields (the validating webhook admits none) is kept whole in `minute`.
    pub fn from_cron(line: &str) -> CronSchedule {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [minute, hour, day_of_month, month, day_of_week] = fields[..] else {
            return CronSchedule {
                minute: Some(line.to_owned()),
                hour: None,
                day_of_month: None,
                month: None,
                day_of_week: None,
            };
        };
        let field = |text: &str| (text != "*").then(|| text.to_owned());
        CronSchedule {
            minute: field(minute),
            hour: field(hour),
            day_of_month: field(day_of_month),
            month: field(month),
            day_of_week: field(day_of_week),
        }
    }
}
// ANCHOR_END: schedule

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::v2::ConcurrencyPolicy;

    // ANCHOR: test
    #[test]
    fn v2_converts_to_the_hub_and_back() {
        let mut spoke = super::super::CronJob::new(
            "nightly",
            super::super::CronJobSpec {
                schedule: CronSchedule {
                    minute: Some("30".into()),
                    hour: Some("2".into()),
                    day_of_week: Some("1-5".into()),
                    ..CronSchedule::default()
                },
                concurrency_policy: Some(ConcurrencyPolicy::Forbid),
                suspend: Some(true),
                successful_jobs_history_limit: Some(5),
                ..Default::default()
            },
        );
        spoke.metadata.namespace = Some("default".into());

        let hub: hub::CronJob = spoke.clone().into();
        assert_eq!(hub.spec.schedule, "30 2 * * 1-5");
        assert_eq!(
            hub.spec.concurrency_policy,
            Some(hub::ConcurrencyPolicy::Forbid)
        );
        assert_eq!(hub.spec.successful_jobs_history_limit, Some(5));
        assert_eq!(hub.metadata, spoke.metadata);
        // and from the hub to v2 and back, the same line
        let again: hub::CronJob = super::super::CronJob::from(hub.clone()).into();
        assert_eq!(again.spec.schedule, hub.spec.schedule);

        let back: super::super::CronJob = hub.into();
        assert_eq!(back.spec, spoke.spec);
        assert_eq!(back.metadata, spoke.metadata);
    }
    // ANCHOR_END: test

    #[test]
    fn a_line_of_another_shape_is_kept_in_minute() {
        let schedule = CronSchedule::from_cron("@daily");
        assert_eq!(schedule.minute.as_deref(), Some("@daily"));
        assert_eq!(schedule.hour, None);
        assert_eq!(schedule.to_cron(), "@daily * * * *");
    }
}
