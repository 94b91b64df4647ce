// ServiceAccountsController: kube-controller-manager's serviceaccount controller
// (pkg/controller/serviceaccount/serviceaccounts_controller.go).
//
// Every namespace that is not terminating has the ServiceAccounts named in
// `service_accounts` (upstream's default: just `default`): a missing one is created with
// only its name, and one that is deleted is created again (a new uid, so the tokens
// bound to the old one stop authenticating). Like upstream's syncNamespace, a namespace
// whose status.phase is Terminating is skipped, an AlreadyExists answer is success, and
// a namespace that is gone is nothing to do. No token Secrets are created (upstream
// stopped with LegacyServiceAccountTokenNoAutoGeneration in 1.24); tokens come from the
// TokenRequest API.
//
// Driving: a ReconcileLoop keyed by namespace name, fed by the namespaces informer and
// by the serviceaccounts informer (a ServiceAccount event enqueues its namespace), as
// upstream's serviceAccountDeleted and namespaceAdded/namespaceUpdated handlers do
// (controller_manager.h).
// Thread-safety: Reconcile may run concurrently for different namespaces.
#pragma once

#include <string>
#include <vector>

#include "client/client.h"
#include "client/informer.h"
#include "core/status.h"

namespace berth::controllers::serviceaccount {

inline const client::GroupVersionResource kServiceAccounts{"", "v1", "serviceaccounts"};
inline const client::GroupVersionResource kNamespaces{"", "v1", "namespaces"};

// The ServiceAccount every namespace gets (DefaultServiceAccountsControllerOptions).
inline constexpr char kDefaultServiceAccountName[] = "default";

class ServiceAccountsController {
 public:
  ServiceAccountsController(client::Client& client, client::Informer& namespaces, client::Informer& service_accounts,
                            std::vector<std::string> service_accounts_to_ensure = {kDefaultServiceAccountName})
      : client_(client),
        namespaces_(namespaces),
        service_accounts_(service_accounts),
        names_(std::move(service_accounts_to_ensure)) {}

  // Creates the missing ServiceAccounts of namespace `ns`.
  Status Reconcile(const std::string& ns);

 private:
  client::Client& client_;
  client::Informer& namespaces_;
  client::Informer& service_accounts_;
  const std::vector<std::string> names_;
};

}  // namespace berth::controllers::serviceaccount
