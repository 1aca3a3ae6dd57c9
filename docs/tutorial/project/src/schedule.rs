// Copyright 2026.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! The schedule format of the CronJob kind: the five fields of cron (minute, hour, day of the
//! month, month, day of the week), read in UTC. Each field is `*`, `*/step`, a number, a range
//! `a-b`, a range with a step `a-b/step`, or a comma-separated list of those. As in cron, when
//! both day fields are restricted a day matches either of them.

use k8s_openapi::jiff::Timestamp;
use k8s_openapi::jiff::tz::TimeZone;

// ANCHOR: schedule
/// A parsed schedule: for each field, the set of values it matches (bit `n` set for value `n`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    minutes: u64,
    hours: u64,
    days_of_month: u64,
    months: u64,
    days_of_week: u64,
    /// The day-of-month field is `*` (matches every day).
    any_day_of_month: bool,
    /// The day-of-week field is `*`.
    any_day_of_week: bool,
}
// ANCHOR_END: schedule

/// How far ahead [`Schedule::next_after`] looks: four years and a day, so a schedule of the 29th
/// of February is found.
const HORIZON_MINUTES: i64 = (4 * 365 + 2) * MINUTES_PER_DAY;
const MINUTES_PER_DAY: i64 = 24 * 60;

/// One field's name and the values it may take.
struct Field {
    name: &'static str,
    min: u32,
    max: u32,
}

const FIELDS: [Field; 5] = [
    Field {
        name: "minute",
        min: 0,
        max: 59,
    },
    Field {
        name: "hour",
        min: 0,
        max: 23,
    },
    Field {
        name: "day of month",
        min: 1,
        max: 31,
    },
    Field {
        name: "month",
        min: 1,
        max: 12,
    },
    Field {
        name: "day of week",
        min: 0,
        max: 6,
    },
];

impl std::str::FromStr for Schedule {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let parts: Vec<&str> = text.split_whitespace().collect();
        if parts.len() != FIELDS.len() {
            return Err(format!(
                "schedule {text:?} has {} fields; write five: minute hour day-of-month month day-of-week",
                parts.len()
            ));
        }
        let mut sets = [0u64; 5];
        for ((set, part), field) in sets.iter_mut().zip(&parts).zip(&FIELDS) {
            *set = parse_field(part, field)?;
        }
        let schedule = Schedule {
            minutes: sets[0],
            hours: sets[1],
            days_of_month: sets[2],
            months: sets[3],
            days_of_week: sets[4],
            any_day_of_month: parts[2] == "*",
            any_day_of_week: parts[4] == "*",
        };
        Ok(schedule)
    }
}

/// The values `text` matches in `field`, as a bit set.
fn parse_field(text: &str, field: &Field) -> Result<u64, String> {
    let mut set = 0u64;
    for item in text.split(',') {
        let (range, step) = match item.split_once('/') {
            Some((range, step)) => (range, number(step, field)?),
            None => (item, 1),
        };
        if step == 0 {
            return Err(format!("the {} field {text:?} has a step of 0", field.name));
        }
        let (low, high) = match range {
            "*" => (field.min, field.max),
            _ => match range.split_once('-') {
                Some((low, high)) => (number(low, field)?, number(high, field)?),
                None => {
                    let value = number(range, field)?;
                    (value, value)
                }
            },
        };
        if low < field.min || high > field.max || low > high {
            return Err(format!(
                "the {} field {text:?} is out of range: values go from {} to {}",
                field.name, field.min, field.max
            ));
        }
        for value in (low..=high).step_by(step as usize) {
            set |= 1 << value;
        }
    }
    Ok(set)
}

fn number(text: &str, field: &Field) -> Result<u32, String> {
    text.parse().map_err(|_| {
        format!(
            "the {} field has {text:?} where a number is expected",
            field.name
        )
    })
}

// ANCHOR: times
impl Schedule {
    /// The first time the schedule fires strictly after `after`, within four years.
    pub fn next_after(&self, after: Timestamp) -> Option<Timestamp> {
        let start = after.as_second().div_euclid(60) + 1;
        let mut minute = start;
        while minute - start <= HORIZON_MINUTES {
            let (day_ok, hour_ok, minute_ok) = self.matches(minute);
            if !day_ok {
                minute = (minute.div_euclid(MINUTES_PER_DAY) + 1) * MINUTES_PER_DAY;
            } else if !hour_ok {
                minute = (minute.div_euclid(60) + 1) * 60;
            } else if !minute_ok {
                minute += 1;
            } else {
                return Timestamp::from_second(minute * 60).ok();
            }
        }
        None
    }

    /// The latest time the schedule fired at or before `now` and strictly after `since`: the run
    /// that is due, if any.
    pub fn last_between(&self, since: Timestamp, now: Timestamp) -> Option<Timestamp> {
        let floor = since.as_second().div_euclid(60);
        let mut minute = now.as_second().div_euclid(60);
        while minute > floor {
            let (day_ok, hour_ok, minute_ok) = self.matches(minute);
            if !day_ok {
                minute = minute.div_euclid(MINUTES_PER_DAY) * MINUTES_PER_DAY - 1;
            } else if !hour_ok {
                minute = minute.div_euclid(60) * 60 - 1;
            } else if !minute_ok {
                minute -= 1;
            } else {
                return Timestamp::from_second(minute * 60).ok();
            }
        }
        None
    }
    // ANCHOR_END: times

    /// Whether the day, the hour and the minute of the minute `minute` (counted from the Unix
    /// epoch, in UTC) match.
    fn matches(&self, minute: i64) -> (bool, bool, bool) {
        let Ok(time) = Timestamp::from_second(minute * 60) else {
            return (false, false, false);
        };
        let time = time.to_zoned(TimeZone::UTC);
        let bit = |set: u64, value: i64| set & (1 << value) != 0;
        let day_of_month = bit(self.days_of_month, i64::from(time.day()));
        let day_of_week = bit(
            self.days_of_week,
            i64::from(time.weekday().to_sunday_zero_offset()),
        );
        let day = match (self.any_day_of_month, self.any_day_of_week) {
            (false, false) => day_of_month || day_of_week,
            _ => day_of_month && day_of_week,
        };
        (
            day && bit(self.months, i64::from(time.month())),
            bit(self.hours, i64::from(time.hour())),
            bit(self.minutes, i64::from(time.minute())),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().expect("a valid timestamp")
    }

    fn schedule(text: &str) -> Schedule {
        text.parse().expect("a valid schedule")
    }

    #[test]
    fn finds_the_next_and_the_last_run() {
        let every_five = schedule("*/5 * * * *");
        let now = at("2026-03-01T10:07:30Z");
        assert_eq!(every_five.next_after(now), Some(at("2026-03-01T10:10:00Z")));
        assert_eq!(
            every_five.last_between(at("2026-03-01T09:00:00Z"), now),
            Some(at("2026-03-01T10:05:00Z"))
        );
        // nothing is due when the last run was at or after the latest scheduled time
        assert_eq!(
            every_five.last_between(at("2026-03-01T10:05:00Z"), now),
            None
        );
    }

    #[test]
    fn reads_ranges_lists_and_the_day_rule() {
        // 09:30 on weekdays
        let weekdays = schedule("30 9 * * 1-5");
        // 2026-03-06 is a Friday: the next run is on Monday
        assert_eq!(
            weekdays.next_after(at("2026-03-06T10:00:00Z")),
            Some(at("2026-03-09T09:30:00Z"))
        );
        // the 1st of the month or any Sunday, at midnight
        let either = schedule("0 0 1 * 0");
        assert_eq!(
            either.next_after(at("2026-03-02T00:00:00Z")),
            Some(at("2026-03-08T00:00:00Z"))
        );
        let leap = schedule("0 12 29 2 *");
        assert_eq!(
            leap.next_after(at("2026-03-01T00:00:00Z")),
            Some(at("2028-02-29T12:00:00Z"))
        );
        assert_eq!(schedule("0,15-20/5 * * * *").minutes, 1 | 1 << 15 | 1 << 20);
    }

    #[test]
    fn rejects_what_it_cannot_read() {
        for (text, problem) in [
            ("* * * *", "has 4 fields"),
            ("61 * * * *", "minute field \"61\" is out of range"),
            ("* * 0 * *", "day of month field \"0\" is out of range"),
            ("*/0 * * * *", "step of 0"),
            ("@hourly * * * *", "\"@hourly\" where a number is expected"),
        ] {
            let error = text.parse::<Schedule>().expect_err(text);
            assert!(error.contains(problem), "{text}: {error}");
        }
        assert_eq!(
            schedule("0 0 31 2 *").next_after(at("2026-01-01T00:00:00Z")),
            None
        );
    }
}
