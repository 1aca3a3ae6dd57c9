//! The firstmate reconciler's permissions.
//!
//! +kubebuilder:rbac:groups=crew.testproject.org,resources=firstmates,verbs=get;list;watch;create;update;patch;delete
//! +kubebuilder:rbac:groups=crew.testproject.org,resources=firstmates/status,verbs=get;update;patch
//! +kubebuilder:rbac:groups=crew.testproject.org,resources=firstmates/finalizers,verbs=update
