package kube

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// SoldierSelector selects the Helm chart's Soldier Deployments and their
// pods.
const SoldierSelector = "app.kubernetes.io/name=regiment,app.kubernetes.io/component=soldier"

// StopSoldiers scales the Deployments of namespace that match selector to
// zero and waits, polling every poll, until none of the pods matching
// selector is left or ctx ends. A Soldier stopped writes nothing more, so a
// restore that follows is not undone: the chart's uninstall hook stops the
// Soldiers before it restores. It returns how many Deployments it scaled
// down.
func StopSoldiers(ctx context.Context, client kubernetes.Interface, namespace, selector string, poll time.Duration) (int, error) {
	deps := client.AppsV1().Deployments(namespace)
	list, err := deps.List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return 0, fmt.Errorf("kube: list soldiers in %q: %w", namespace, err)
	}
	scaled := 0
	for _, d := range list.Items {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			s, err := deps.GetScale(ctx, d.Name, metav1.GetOptions{})
			if err != nil || s.Spec.Replicas == 0 {
				return err
			}
			s.Spec.Replicas = 0
			_, err = deps.UpdateScale(ctx, d.Name, s, metav1.UpdateOptions{FieldManager: fieldManager})
			return err
		})
		if err != nil {
			return scaled, fmt.Errorf("kube: scale soldier %s/%s to 0: %w", namespace, d.Name, err)
		}
		scaled++
	}
	for {
		pods, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
		switch {
		case err != nil:
			return scaled, fmt.Errorf("kube: list soldier pods in %q: %w", namespace, err)
		case len(pods.Items) == 0:
			return scaled, nil
		}
		select {
		case <-ctx.Done():
			return scaled, fmt.Errorf("kube: %d soldier pods still in %q: %w", len(pods.Items), namespace, ctx.Err())
		case <-time.After(poll):
		}
	}
}
