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

//! Conversion of Captain between v2 (this version, a spoke) and
//! v1 (the hub, the storage version). The conversion webhook (`HubConverter` in
//! `src/webhook/v1/captain.rs`) converts every version through the hub, so a spoke converts only to
//! and from the hub, both ways.

use crate::api::v1 as hub;

// TODO(user): when the versions' fields differ, convert them here; these copy the fields the
// scaffold gives both versions.

impl From<super::Captain> for hub::Captain {
    fn from(spoke: super::Captain) -> Self {
        hub::Captain {
            metadata: spoke.metadata,
            spec: hub::CaptainSpec {
                foo: spoke.spec.foo,
            },
            status: spoke.status.map(|status| hub::CaptainStatus {
                conditions: status.conditions,
            }),
        }
    }
}

impl From<hub::Captain> for super::Captain {
    fn from(hub: hub::Captain) -> Self {
        super::Captain {
            metadata: hub.metadata,
            spec: super::CaptainSpec { foo: hub.spec.foo },
            status: hub.status.map(|status| super::CaptainStatus {
                conditions: status.conditions,
            }),
        }
    }
}
