//! Rust twin of controller-tools' webhook fixture `valid-custom-name`: the markers of `valid`
//! plus names for both configuration objects.
//!
//! +kubebuilder:webhookconfiguration:mutating=true,name=foo
//! +kubebuilder:webhookconfiguration:mutating=false,name=bar
//!
//! +kubebuilder:webhook:webhookVersions=v1,path=/validate-testdata-kubebuilder-io-v1-cronjob,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,resources=cronjobs,versions=v1,verbs=create;update,admissionReviewVersions=v1;v1beta1,groups=testdata.kubebuilder.io,name=validation.cronjob.testdata.kubebuilder.io,sideEffects=None,timeoutSeconds=10
//! +kubebuilder:webhook:path=/validate-testdata-kubebuilder-io-v1-cronjob,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,resources=cronjobs,versions=v1,verbs=create;update,admissionReviewVersions=v1;v1beta1,groups=testdata.kubebuilder.io,name=validation.cronjob.testdata.kubebuilder.io,sideEffects=NoneOnDryRun,timeoutSeconds=10
//! +kubebuilder:webhook:path=/mutate-testdata-kubebuilder-io-v1-cronjob,mutating=true,failurePolicy=fail,matchPolicy=Equivalent,resources=cronjobs,versions=v1,verbs=create;update,admissionReviewVersions=v1;v1beta1,groups=testdata.kubebuilder.io,name=default.cronjob.testdata.kubebuilder.io,sideEffects=None,timeoutSeconds=10,reinvocationPolicy=IfNeeded
