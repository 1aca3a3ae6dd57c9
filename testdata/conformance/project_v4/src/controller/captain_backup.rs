//! The captain_backup reconciler's permissions.
//!
//! +kubebuilder:rbac:groups=crew.testproject.org,resources=captains,verbs=get;list;watch;create;update;patch;delete
//! +kubebuilder:rbac:groups=crew.testproject.org,resources=captains/status,verbs=get;update;patch
//! +kubebuilder:rbac:groups=crew.testproject.org,resources=captains/finalizers,verbs=update
