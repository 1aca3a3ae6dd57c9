//! Prints the CRD of every kind of the crate, as kube's `crd()` generates it, as a JSON array.
//!
//! +kubebuilder:rbac:groups=docs.example.com,resources=documents,verbs=get;list;watch
//! +kubebuilder:rbac:groups=docs.example.com,resources=documents/status,verbs=get;update;patch

mod api;

use kube::CustomResourceExt;

/// +kubebuilder:webhook:path=/validate-docs-example-com-v1-document,mutating=false,failurePolicy=fail,sideEffects=None,groups=docs.example.com,resources=documents,verbs=create;update,versions=v1,name=vdocument.kb.io,admissionReviewVersions=v1
fn main() {
    let crds = vec![
        api::document::Document::crd(),
        api::gadget::Gadget::crd(),
        api::memo::Memo::crd(),
        api::widget::Widget::crd(),
    ];
    println!("{}", serde_json::to_string_pretty(&crds).expect("CRDs as JSON"));
}
