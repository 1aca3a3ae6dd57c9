use operator_gen_runtime::prelude::*;

/// +kubebuilder:subresource:status
#[derive(CustomResource)]
#[k8s(group = "crew.my.domain", version = "v1", kind = "Captain")]
pub struct CaptainSpec {
    pub next: Option<Box<CaptainSpec>>,
    pub list: Vec<Node>,
}

pub struct Node {
    pub children: Vec<Node>,
    pub other: Option<Box<Other>>,
}

pub struct Other {
    pub back: Option<Box<Node>>,
}
