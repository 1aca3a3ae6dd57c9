//! The sailor reconciler's permissions.
//!
//! +kubebuilder:rbac:groups=crew.testproject.org,resources=sailors,verbs=get;list;watch;create;update;patch;delete
//! +kubebuilder:rbac:groups=crew.testproject.org,resources=sailors/status,verbs=get;update;patch
//! +kubebuilder:rbac:groups=crew.testproject.org,resources=sailors/finalizers,verbs=update
