/// +kubebuilder:storageversion
#[derive(CustomResource)]
pub struct CaptainSpec {}