mod inner {}
    /// Captain.
    #[doc = " +kubebuilder:storageversion"]
    #[derive(Clone, CustomResource)]
    pub struct CaptainSpec;
/// +kubebuilder:storageversion
#[derive(CustomResource)]
pub struct SloopSpec { a: i32 }
