package testenv

import (
	"context"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// ServiceAccountConfig is a client config that authenticates as the
// ServiceAccount namespace/name with a ten-minute token from the
// TokenRequest API, as a pod of that ServiceAccount would.
func (e *Env) ServiceAccountConfig(namespace, name string) (*rest.Config, error) {
	exp := int64(600)
	tok, err := e.Client.CoreV1().ServiceAccounts(namespace).CreateToken(context.Background(), name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	cfg := rest.AnonymousClientConfig(e.Config)
	cfg.BearerToken = tok.Status.Token
	return cfg, nil
}
