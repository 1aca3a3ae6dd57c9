#[derive(CustomResource)]
#[k8s(group = "crew.my.domain", version = "v1", kind = "Captain")]
pub struct CaptainSpec {
    /// +kubebuilder:validation:Pattern="^\d+$"
    pub a: String,
    /// +kubebuilder:validation:Pattern=`^\d+$`
    pub b: String,
    /// +kubebuilder:validation:Pattern="^[a-z]+\\.example\\.com$"
    pub c: String,
}
