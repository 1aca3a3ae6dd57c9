//! The navigator reconciler's permissions.
//!
//! +kubebuilder:rbac:groups=crew.testproject.org,resources=navigators,verbs=get;list;watch;create;update;patch;delete
//! +kubebuilder:rbac:groups=crew.testproject.org,resources=navigators/status,verbs=get;update;patch
//! +kubebuilder:rbac:groups=crew.testproject.org,resources=navigators/finalizers,verbs=update
