package main

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The demo's kinds (deploy/demo/crds.yaml), typed as a kubebuilder project
// would type them. Only the fields the App controller reads are declared;
// DeepCopy is written by hand in place of controller-gen's output.

var groupVersion = schema.GroupVersion{Group: "demo.refwatch.dev", Version: "v1alpha1"}

// ObjectRef names a referent; an empty Namespace means the App's own.
type ObjectRef struct {
	Name       string `json:"name"`
	Namespace  string `json:"namespace,omitempty"`
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
}

type AppSpec struct {
	DatabaseRef ObjectRef `json:"databaseRef"`
	CacheRef    ObjectRef `json:"cacheRef"`
	SecretRef   ObjectRef `json:"secretRef"`
}

type Condition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	Reason             string `json:"reason,omitempty"`
	Message            string `json:"message,omitempty"`
	LastTransitionTime string `json:"lastTransitionTime,omitempty"`
}

// AppStatus.ResolvedAt is RFC 3339 with milliseconds, as the demo writes it:
// metav1.Time would round it to seconds.
type AppStatus struct {
	ResolvedAt string      `json:"resolvedAt,omitempty"`
	Conditions []Condition `json:"conditions,omitempty"`
}

type App struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              AppSpec   `json:"spec,omitempty"`
	Status            AppStatus `json:"status,omitempty"`
}

type AppList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []App `json:"items"`
}

type ReferentSpec struct {
	ReadyAfterMs int64 `json:"readyAfterMs,omitempty"`
}

type ReferentStatus struct {
	ReadyAt    string      `json:"readyAt,omitempty"`
	Conditions []Condition `json:"conditions,omitempty"`
}

type Database struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ReferentSpec   `json:"spec,omitempty"`
	Status            ReferentStatus `json:"status,omitempty"`
}

type DatabaseList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Database `json:"items"`
}

type Cache struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ReferentSpec   `json:"spec,omitempty"`
	Status            ReferentStatus `json:"status,omitempty"`
}

type CacheList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Cache `json:"items"`
}

// isReady is the demo's readiness of a Database or Cache: condition Ready=True.
func isReady(s *ReferentStatus) bool {
	for _, c := range s.Conditions {
		if c.Type == "Ready" {
			return c.Status == "True"
		}
	}
	return false
}

func addToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(groupVersion, &App{}, &AppList{}, &Database{}, &DatabaseList{}, &Cache{}, &CacheList{})
	metav1.AddToGroupVersion(s, groupVersion)
	return nil
}

func copyConditions(in []Condition) []Condition {
	if in == nil {
		return nil
	}
	return append([]Condition(nil), in...)
}

func (in *App) DeepCopyInto(out *App) {
	*out = *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Status.Conditions = copyConditions(in.Status.Conditions)
}

func (in *App) DeepCopyObject() runtime.Object {
	out := new(App)
	in.DeepCopyInto(out)
	return out
}

func (in *AppList) DeepCopyObject() runtime.Object {
	out := &AppList{TypeMeta: in.TypeMeta}
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]App, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

func (in *Database) DeepCopyInto(out *Database) {
	*out = *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Status.Conditions = copyConditions(in.Status.Conditions)
}

func (in *Database) DeepCopyObject() runtime.Object {
	out := new(Database)
	in.DeepCopyInto(out)
	return out
}

func (in *DatabaseList) DeepCopyObject() runtime.Object {
	out := &DatabaseList{TypeMeta: in.TypeMeta}
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]Database, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

func (in *Cache) DeepCopyInto(out *Cache) {
	*out = *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Status.Conditions = copyConditions(in.Status.Conditions)
}

func (in *Cache) DeepCopyObject() runtime.Object {
	out := new(Cache)
	in.DeepCopyInto(out)
	return out
}

func (in *CacheList) DeepCopyObject() runtime.Object {
	out := &CacheList{TypeMeta: in.TypeMeta}
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]Cache, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}
