package controller

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	v2 "example.kubefake.dev/widgets/api/v2"
)

// The reconciler's ClusterRole (config/rbac/role.yaml) is all it needs: bound to a
// ServiceAccount, whose token comes from the TokenRequest API, a manager running as that
// account reconciles a Widget completely. Before the binding the same token is refused.
func TestClusterRoleSufficesThroughServiceAccountToken(t *testing.T) {
	const system, account = "widget-system", "widget-controller-manager"
	username := "system:serviceaccount:" + system + ":" + account
	cs := kubernetes.NewForConfigOrDie(cfg)

	for _, ns := range []string{system, rbacNamespace} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("namespace %s: %v", ns, err)
		}
	}
	if _, err := cs.CoreV1().ServiceAccounts(system).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: account}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("service account: %v", err)
	}
	role := readClusterRole(t, filepath.Join("..", "..", "config", "rbac", "role.yaml"))
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatalf("cluster role: %v", err)
	}

	expiry := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts(system).CreateToken(ctx, account, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest: %v", err)
	}
	if tr.Status.Token == "" || tr.Status.ExpirationTimestamp.IsZero() {
		t.Fatalf("TokenRequest answered %+v", tr.Status)
	}
	saCfg := &rest.Config{
		Host:            cfg.Host,
		BearerToken:     tr.Status.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: cfg.CAData},
		QPS:             cfg.QPS,
		Burst:           cfg.Burst,
	}
	saCS := kubernetes.NewForConfigOrDie(saCfg)

	// Who the token is.
	review, err := saCS.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SelfSubjectReview with the token: %v", err)
	}
	if review.Status.UserInfo.Username != username {
		t.Fatalf("the token is %q, want %q", review.Status.UserInfo.Username, username)
	}

	// Unbound, it may do nothing the reconciler needs.
	_, err = saCS.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
	want := fmt.Sprintf(`configmaps is forbidden: User %q cannot list resource "configmaps" in API group "" at the cluster scope`, username)
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("unbound list of configmaps: %v, want Forbidden %q", err, want)
	}
	saClient, err := client.New(saCfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatalf("client with the token: %v", err)
	}
	err = saClient.List(ctx, &v2.WidgetList{})
	want = fmt.Sprintf(`widgets.example.kubefake.dev is forbidden: User %q cannot list resource "widgets" in API group "example.kubefake.dev" at the cluster scope`, username)
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("unbound list of widgets: %v, want Forbidden %q", err, want)
	}
	if allowed := canI(t, saCS, "update", "example.kubefake.dev", "widgets", "status"); allowed {
		t.Fatalf("unbound, SelfSubjectAccessReview allows updating widgets/status")
	}

	// Bound (as config/rbac/role_binding.yaml would), it may.
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "manager-rolebinding"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: account, Namespace: system}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("cluster role binding: %v", err)
	}
	eventually(t, "the binding takes effect", func() error {
		if !canI(t, saCS, "update", "example.kubefake.dev", "widgets", "status") {
			return fmt.Errorf("SelfSubjectAccessReview still refuses widgets/status update")
		}
		return nil
	})

	// The whole manager as the service account: cluster-wide informers (limited by a field
	// selector to rbacNamespace, which the suite's manager leaves alone), the reconciler's
	// writes, its status updates and its events.
	mgr, err := ctrl.NewManager(saCfg, ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		Cache: cache.Options{
			DefaultFieldSelector: fields.OneTermEqualSelector("metadata.namespace", rbacNamespace),
		},
	})
	if err != nil {
		t.Fatalf("manager as the service account: %v", err)
	}
	if err := (&WidgetReconciler{
		Client:   mgr.GetClient(),
		Scheme:   mgr.GetScheme(),
		Recorder: mgr.GetEventRecorder("widget-controller"),
	}).SetupWithManager(mgr, "widget-as-service-account"); err != nil {
		t.Fatalf("reconciler: %v", err)
	}
	mgrCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mgrCtx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager as the service account: %v", err)
		}
	}()

	w := &v2.Widget{
		ObjectMeta: metav1.ObjectMeta{Name: "rbac", Namespace: rbacNamespace},
		Spec:       v2.WidgetSpec{Replicas: 1, Message: "as a service account"},
	}
	if err := k8sClient.Create(ctx, w); err != nil {
		t.Fatalf("create widget: %v", err)
	}
	waitOwned(t, saClient, w)

	// Its events (events.k8s.io/v1) were written too.
	eventually(t, "the reconciler's event", func() error {
		list, err := cs.EventsV1().Events(rbacNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Regarding.Name == w.Name && e.Regarding.Kind == "Widget" && e.Reason == "Reconciled" {
				return checkEvent(e)
			}
		}
		return fmt.Errorf("no Reconciled event about Widget %s among %d events", w.Name, len(list.Items))
	})
}

func checkEvent(e eventsv1.Event) error {
	if e.ReportingController != "widget-controller" || e.Type != corev1.EventTypeNormal || e.Action != "Reconcile" {
		return fmt.Errorf("event %+v", e)
	}
	return nil
}

// canI asks the apiserver, as the client's user, whether it may verb group/resource/subresource.
func canI(t *testing.T, cs kubernetes.Interface, verb, group, resource, subresource string) bool {
	t.Helper()
	r, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: rbacNamespace, Verb: verb, Group: group, Resource: resource, Subresource: subresource,
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SelfSubjectAccessReview: %v", err)
	}
	return r.Status.Allowed
}

// readClusterRole reads the one ClusterRole of a (multi-document) manifest.
func readClusterRole(t *testing.T, path string) *rbacv1.ClusterRole {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var role rbacv1.ClusterRole
		if err := dec.Decode(&role); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if role.Kind == "ClusterRole" {
			return &role
		}
	}
	t.Fatalf("%s has no ClusterRole", path)
	return nil
}
