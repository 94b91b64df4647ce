#include "apiserver/protobuf_codec.h"

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <span>
#include <string>

#include "api/yaml_codec.h"
#include "core/base64.h"
#include "core/clock.h"

namespace berth::apiserver {

using nlohmann::json;

namespace {

// ---------------------------------------------------------------------------
// Field tables

enum class FieldType : uint8_t {
  kString,
  kBytes,  // base64 in JSON
  kBool,
  kInt32,
  kInt64,
  kMessage,      // Field::message
  kTime,         // metav1.Time {1: seconds, 2: nanos}
  kQuantity,     // resource.Quantity {1: string}
  kIntOrString,  // intstr.IntOrString {1: type, 2: intVal, 3: strVal}
};
using enum FieldType;

// Field flags.
constexpr uint8_t kOmitZero = 0;  // non-pointer Go field: omitted from the JSON when zero
constexpr uint8_t kKeep = 1;      // pointer, or no omitempty: kept even when zero
constexpr uint8_t kRepeated = 2;  // repeated field: a JSON array (omitted when empty)
constexpr uint8_t kMap = 4;       // map<string, type>: repeated {1: key, 2: value} entries
constexpr uint8_t kInline = 8;    // embedded Go struct: its fields go into the parent object

struct Message;
struct Field {
  int number;
  const char* json_name;
  FieldType type;
  uint8_t flags = kOmitZero;
  const Message* message = nullptr;
};
struct Message {
  const char* name;  // the proto message name, for errors
  std::span<const Field> fields;

  const Field* Find(int number) const {
    for (const Field& f : fields) {
      if (f.number == number) return &f;
    }
    return nullptr;
  }
};

// Field numbers from k8s.io/apimachinery pkg/apis/meta/v1/generated.proto.
constexpr Field kOwnerReferenceFields[] = {
    {5, "apiVersion", kString, kKeep}, {1, "kind", kString, kKeep},     {3, "name", kString, kKeep},
    {4, "uid", kString, kKeep},        {6, "controller", kBool, kKeep}, {7, "blockOwnerDeletion", kBool, kKeep},
};
constexpr Message kOwnerReference{"OwnerReference", kOwnerReferenceFields};

constexpr Field kObjectMetaFields[] = {
    {1, "name", kString},
    {2, "generateName", kString},
    {3, "namespace", kString},
    {4, "selfLink", kString},
    {5, "uid", kString},
    {6, "resourceVersion", kString},
    {7, "generation", kInt64},
    {8, "creationTimestamp", kTime},
    {9, "deletionTimestamp", kTime, kKeep},
    {10, "deletionGracePeriodSeconds", kInt64, kKeep},
    {11, "labels", kString, kMap},
    {12, "annotations", kString, kMap},
    {13, "ownerReferences", kMessage, kRepeated, &kOwnerReference},
    {14, "finalizers", kString, kRepeated},
};
constexpr Message kObjectMeta{"ObjectMeta", kObjectMetaFields};

constexpr Field kLabelSelectorRequirementFields[] = {
    {1, "key", kString, kKeep}, {2, "operator", kString, kKeep}, {3, "values", kString, kRepeated}};
constexpr Message kLabelSelectorRequirement{"LabelSelectorRequirement", kLabelSelectorRequirementFields};
constexpr Field kLabelSelectorFields[] = {{1, "matchLabels", kString, kMap},
                                          {2, "matchExpressions", kMessage, kRepeated, &kLabelSelectorRequirement}};
constexpr Message kLabelSelector{"LabelSelector", kLabelSelectorFields};

constexpr Field kPreconditionsFields[] = {{1, "uid", kString, kKeep}, {2, "resourceVersion", kString, kKeep}};
constexpr Message kPreconditions{"Preconditions", kPreconditionsFields};
constexpr Field kDeleteOptionsFields[] = {
    {1, "gracePeriodSeconds", kInt64, kKeep}, {2, "preconditions", kMessage, kKeep, &kPreconditions},
    {3, "orphanDependents", kBool, kKeep},    {4, "propagationPolicy", kString, kKeep},
    {5, "dryRun", kString, kRepeated},        {6, "ignoreStoreReadErrorWithClusterBreakingPotential", kBool, kKeep},
};
constexpr Message kDeleteOptions{"DeleteOptions", kDeleteOptionsFields};

// k8s.io/api core/v1/generated.proto.
constexpr Field kLocalObjectReferenceFields[] = {{1, "name", kString}};
constexpr Message kLocalObjectReference{"LocalObjectReference", kLocalObjectReferenceFields};
constexpr Field kObjectReferenceFields[] = {
    {1, "kind", kString},       {2, "namespace", kString},       {3, "name", kString},      {4, "uid", kString},
    {5, "apiVersion", kString}, {6, "resourceVersion", kString}, {7, "fieldPath", kString},
};
constexpr Message kObjectReference{"ObjectReference", kObjectReferenceFields};

constexpr Field kNamespaceSpecFields[] = {{1, "finalizers", kString, kRepeated}};
constexpr Message kNamespaceSpec{"NamespaceSpec", kNamespaceSpecFields};
// NamespaceStatus: phase only (conditions are written by the server).
constexpr Field kNamespaceStatusFields[] = {{1, "phase", kString}};
constexpr Message kNamespaceStatus{"NamespaceStatus", kNamespaceStatusFields};
constexpr Field kNamespaceFields[] = {{1, "metadata", kMessage, kKeep, &kObjectMeta},
                                      {2, "spec", kMessage, kOmitZero, &kNamespaceSpec},
                                      {3, "status", kMessage, kOmitZero, &kNamespaceStatus}};
constexpr Message kNamespace{"Namespace", kNamespaceFields};

constexpr Field kConfigMapFields[] = {{1, "metadata", kMessage, kKeep, &kObjectMeta},
                                      {2, "data", kString, kMap},
                                      {3, "binaryData", kBytes, kMap},
                                      {4, "immutable", kBool, kKeep}};
constexpr Message kConfigMap{"ConfigMap", kConfigMapFields};

constexpr Field kSecretFields[] = {{1, "metadata", kMessage, kKeep, &kObjectMeta},
                                   {2, "data", kBytes, kMap},
                                   {3, "type", kString},
                                   {4, "stringData", kString, kMap},
                                   {5, "immutable", kBool, kKeep}};
constexpr Message kSecret{"Secret", kSecretFields};

constexpr Field kServiceAccountFields[] = {{1, "metadata", kMessage, kKeep, &kObjectMeta},
                                           {2, "secrets", kMessage, kRepeated, &kObjectReference},
                                           {3, "imagePullSecrets", kMessage, kRepeated, &kLocalObjectReference},
                                           {4, "automountServiceAccountToken", kBool, kKeep}};
constexpr Message kServiceAccount{"ServiceAccount", kServiceAccountFields};

// Container and what kubectl's commands put in it.
constexpr Field kContainerPortFields[] = {{1, "name", kString},
                                          {2, "hostPort", kInt32},
                                          {3, "containerPort", kInt32, kKeep},
                                          {4, "protocol", kString},
                                          {5, "hostIP", kString}};
constexpr Message kContainerPort{"ContainerPort", kContainerPortFields};
constexpr Field kObjectFieldSelectorFields[] = {{1, "apiVersion", kString}, {2, "fieldPath", kString, kKeep}};
constexpr Message kObjectFieldSelector{"ObjectFieldSelector", kObjectFieldSelectorFields};
constexpr Field kResourceFieldSelectorFields[] = {
    {1, "containerName", kString}, {2, "resource", kString, kKeep}, {3, "divisor", kQuantity}};
constexpr Message kResourceFieldSelector{"ResourceFieldSelector", kResourceFieldSelectorFields};
// ConfigMapKeySelector and SecretKeySelector share their shape.
constexpr Field kKeySelectorFields[] = {{1, "localObjectReference", kMessage, kInline, &kLocalObjectReference},
                                        {2, "key", kString, kKeep},
                                        {3, "optional", kBool, kKeep}};
constexpr Message kKeySelector{"KeySelector", kKeySelectorFields};
constexpr Field kEnvVarSourceFields[] = {{1, "fieldRef", kMessage, kKeep, &kObjectFieldSelector},
                                         {2, "resourceFieldRef", kMessage, kKeep, &kResourceFieldSelector},
                                         {3, "configMapKeyRef", kMessage, kKeep, &kKeySelector},
                                         {4, "secretKeyRef", kMessage, kKeep, &kKeySelector}};
constexpr Message kEnvVarSource{"EnvVarSource", kEnvVarSourceFields};
constexpr Field kEnvVarFields[] = {
    {1, "name", kString, kKeep}, {2, "value", kString}, {3, "valueFrom", kMessage, kKeep, &kEnvVarSource}};
constexpr Message kEnvVar{"EnvVar", kEnvVarFields};
// ConfigMapEnvSource and SecretEnvSource share their shape.
constexpr Field kEnvSourceFields[] = {{1, "localObjectReference", kMessage, kInline, &kLocalObjectReference},
                                      {2, "optional", kBool, kKeep}};
constexpr Message kEnvSource{"EnvSource", kEnvSourceFields};
constexpr Field kEnvFromSourceFields[] = {{1, "prefix", kString},
                                          {2, "configMapRef", kMessage, kKeep, &kEnvSource},
                                          {3, "secretRef", kMessage, kKeep, &kEnvSource}};
constexpr Message kEnvFromSource{"EnvFromSource", kEnvFromSourceFields};
constexpr Field kResourceRequirementsFields[] = {{1, "limits", kQuantity, kMap}, {2, "requests", kQuantity, kMap}};
constexpr Message kResourceRequirements{"ResourceRequirements", kResourceRequirementsFields};
constexpr Field kVolumeMountFields[] = {{1, "name", kString, kKeep},
                                        {2, "readOnly", kBool},
                                        {3, "mountPath", kString, kKeep},
                                        {4, "subPath", kString},
                                        {5, "mountPropagation", kString, kKeep},
                                        {6, "subPathExpr", kString},
                                        {7, "recursiveReadOnly", kString, kKeep}};
constexpr Message kVolumeMount{"VolumeMount", kVolumeMountFields};
constexpr Field kContainerFields[] = {
    {1, "name", kString, kKeep},
    {2, "image", kString},
    {3, "command", kString, kRepeated},
    {4, "args", kString, kRepeated},
    {5, "workingDir", kString},
    {6, "ports", kMessage, kRepeated, &kContainerPort},
    {7, "env", kMessage, kRepeated, &kEnvVar},
    {8, "resources", kMessage, kOmitZero, &kResourceRequirements},
    {9, "volumeMounts", kMessage, kRepeated, &kVolumeMount},
    {13, "terminationMessagePath", kString},
    {14, "imagePullPolicy", kString},
    {16, "stdin", kBool},
    {17, "stdinOnce", kBool},
    {18, "tty", kBool},
    {19, "envFrom", kMessage, kRepeated, &kEnvFromSource},
    {20, "terminationMessagePolicy", kString},
    {24, "restartPolicy", kString, kKeep},
};
constexpr Message kContainer{"Container", kContainerFields};

constexpr Field kTolerationFields[] = {{1, "key", kString},
                                       {2, "operator", kString},
                                       {3, "value", kString},
                                       {4, "effect", kString},
                                       {5, "tolerationSeconds", kInt64, kKeep}};
constexpr Message kToleration{"Toleration", kTolerationFields};
constexpr Field kPodSchedulingGateFields[] = {{1, "name", kString, kKeep}};
constexpr Message kPodSchedulingGate{"PodSchedulingGate", kPodSchedulingGateFields};

constexpr Field kPodSpecFields[] = {
    {2, "containers", kMessage, kRepeated, &kContainer},
    {3, "restartPolicy", kString},
    {4, "terminationGracePeriodSeconds", kInt64, kKeep},
    {5, "activeDeadlineSeconds", kInt64, kKeep},
    {6, "dnsPolicy", kString},
    {7, "nodeSelector", kString, kMap},
    {8, "serviceAccountName", kString},
    {9, "serviceAccount", kString},
    {10, "nodeName", kString},
    {11, "hostNetwork", kBool},
    {12, "hostPID", kBool},
    {13, "hostIPC", kBool},
    {15, "imagePullSecrets", kMessage, kRepeated, &kLocalObjectReference},
    {16, "hostname", kString},
    {17, "subdomain", kString},
    {19, "schedulerName", kString},
    {20, "initContainers", kMessage, kRepeated, &kContainer},
    {21, "automountServiceAccountToken", kBool, kKeep},
    {22, "tolerations", kMessage, kRepeated, &kToleration},
    {24, "priorityClassName", kString},
    {25, "priority", kInt32, kKeep},
    {27, "shareProcessNamespace", kBool, kKeep},
    {29, "runtimeClassName", kString, kKeep},
    {30, "enableServiceLinks", kBool, kKeep},
    {31, "preemptionPolicy", kString, kKeep},
    {32, "overhead", kQuantity, kMap},
    {35, "setHostnameAsFQDN", kBool, kKeep},
    {37, "hostUsers", kBool, kKeep},
    {38, "schedulingGates", kMessage, kRepeated, &kPodSchedulingGate},
};
constexpr Message kPodSpec{"PodSpec", kPodSpecFields};
constexpr Field kPodTemplateSpecFields[] = {{1, "metadata", kMessage, kOmitZero, &kObjectMeta},
                                            {2, "spec", kMessage, kOmitZero, &kPodSpec}};
constexpr Message kPodTemplateSpec{"PodTemplateSpec", kPodTemplateSpecFields};
// Pod: status is written by the server and the node agent, not decoded.
constexpr Field kPodFields[] = {{1, "metadata", kMessage, kKeep, &kObjectMeta},
                                {2, "spec", kMessage, kOmitZero, &kPodSpec}};
constexpr Message kPod{"Pod", kPodFields};

constexpr Field kServicePortFields[] = {{1, "name", kString},       {2, "protocol", kString},
                                        {3, "port", kInt32, kKeep}, {4, "targetPort", kIntOrString},
                                        {5, "nodePort", kInt32},    {6, "appProtocol", kString, kKeep}};
constexpr Message kServicePort{"ServicePort", kServicePortFields};
constexpr Field kServiceSpecFields[] = {
    {1, "ports", kMessage, kRepeated, &kServicePort},
    {2, "selector", kString, kMap},
    {3, "clusterIP", kString},
    {4, "type", kString},
    {5, "externalIPs", kString, kRepeated},
    {7, "sessionAffinity", kString},
    {10, "externalName", kString},
    {11, "externalTrafficPolicy", kString},
    {13, "publishNotReadyAddresses", kBool},
    {18, "clusterIPs", kString, kRepeated},
    {19, "ipFamilies", kString, kRepeated},
    {17, "ipFamilyPolicy", kString, kKeep},
    {20, "allocateLoadBalancerNodePorts", kBool, kKeep},
    {22, "internalTrafficPolicy", kString, kKeep},
};
constexpr Message kServiceSpec{"ServiceSpec", kServiceSpecFields};
constexpr Field kServiceFields[] = {{1, "metadata", kMessage, kKeep, &kObjectMeta},
                                    {2, "spec", kMessage, kOmitZero, &kServiceSpec}};
constexpr Message kService{"Service", kServiceFields};

// k8s.io/api scheduling/v1/generated.proto.
constexpr Field kPriorityClassFields[] = {{1, "metadata", kMessage, kKeep, &kObjectMeta},
                                          {2, "value", kInt32, kKeep},
                                          {3, "globalDefault", kBool},
                                          {4, "description", kString},
                                          {5, "preemptionPolicy", kString, kKeep}};
constexpr Message kPriorityClass{"PriorityClass", kPriorityClassFields};

// k8s.io/api batch/v1/generated.proto (podFailurePolicy and successPolicy are
// not decoded: kubectl create job never sets them).
constexpr Field kJobSpecFields[] = {
    {1, "parallelism", kInt32, kKeep},
    {2, "completions", kInt32, kKeep},
    {3, "activeDeadlineSeconds", kInt64, kKeep},
    {4, "selector", kMessage, kKeep, &kLabelSelector},
    {5, "manualSelector", kBool, kKeep},
    {6, "template", kMessage, kOmitZero, &kPodTemplateSpec},
    {7, "backoffLimit", kInt32, kKeep},
    {8, "ttlSecondsAfterFinished", kInt32, kKeep},
    {9, "completionMode", kString, kKeep},
    {10, "suspend", kBool, kKeep},
    {12, "backoffLimitPerIndex", kInt32, kKeep},
    {13, "maxFailedIndexes", kInt32, kKeep},
    {14, "podReplacementPolicy", kString, kKeep},
    {15, "managedBy", kString, kKeep},
};
constexpr Message kJobSpec{"JobSpec", kJobSpecFields};
constexpr Field kJobFields[] = {{1, "metadata", kMessage, kKeep, &kObjectMeta},
                                {2, "spec", kMessage, kOmitZero, &kJobSpec}};
constexpr Message kJob{"Job", kJobFields};

// k8s.io/api policy/v1/generated.proto.
constexpr Field kEvictionFields[] = {{1, "metadata", kMessage, kKeep, &kObjectMeta},
                                     {2, "deleteOptions", kMessage, kKeep, &kDeleteOptions}};
constexpr Message kEviction{"Eviction", kEvictionFields};

// k8s.io/api rbac/v1/generated.proto: `kubectl create role|clusterrole|rolebinding|
// clusterrolebinding`.
constexpr Field kPolicyRuleFields[] = {{1, "verbs", kString, kRepeated},
                                       {2, "apiGroups", kString, kRepeated},
                                       {3, "resources", kString, kRepeated},
                                       {4, "resourceNames", kString, kRepeated},
                                       {5, "nonResourceURLs", kString, kRepeated}};
constexpr Message kPolicyRule{"PolicyRule", kPolicyRuleFields};
constexpr Field kAggregationRuleFields[] = {{1, "clusterRoleSelectors", kMessage, kRepeated, &kLabelSelector}};
constexpr Message kAggregationRule{"AggregationRule", kAggregationRuleFields};
constexpr Field kRoleFields[] = {{1, "metadata", kMessage, kKeep, &kObjectMeta},
                                 {2, "rules", kMessage, kRepeated, &kPolicyRule}};
constexpr Message kRole{"Role", kRoleFields};
constexpr Field kClusterRoleFields[] = {{1, "metadata", kMessage, kKeep, &kObjectMeta},
                                        {2, "rules", kMessage, kRepeated, &kPolicyRule},
                                        {3, "aggregationRule", kMessage, kKeep, &kAggregationRule}};
constexpr Message kClusterRole{"ClusterRole", kClusterRoleFields};
constexpr Field kSubjectFields[] = {
    {1, "kind", kString, kKeep}, {2, "apiGroup", kString}, {3, "name", kString, kKeep}, {4, "namespace", kString}};
constexpr Message kSubject{"Subject", kSubjectFields};
constexpr Field kRoleRefFields[] = {
    {1, "apiGroup", kString, kKeep}, {2, "kind", kString, kKeep}, {3, "name", kString, kKeep}};
constexpr Message kRoleRef{"RoleRef", kRoleRefFields};
constexpr Field kRoleBindingFields[] = {{1, "metadata", kMessage, kKeep, &kObjectMeta},
                                        {2, "subjects", kMessage, kRepeated, &kSubject},
                                        {3, "roleRef", kMessage, kKeep, &kRoleRef}};
constexpr Message kRoleBinding{"RoleBinding", kRoleBindingFields};

// k8s.io/api authorization/v1/generated.proto: the reviews `kubectl auth can-i`
// sends (access_reviews.h).
constexpr Field kResourceAttributesFields[] = {
    {1, "namespace", kString}, {2, "verb", kString},        {3, "group", kString}, {4, "version", kString},
    {5, "resource", kString},  {6, "subresource", kString}, {7, "name", kString},
};
constexpr Message kResourceAttributes{"ResourceAttributes", kResourceAttributesFields};
constexpr Field kNonResourceAttributesFields[] = {{1, "path", kString}, {2, "verb", kString}};
constexpr Message kNonResourceAttributes{"NonResourceAttributes", kNonResourceAttributesFields};
constexpr Field kSubjectAccessReviewStatusFields[] = {
    {1, "allowed", kBool, kKeep}, {2, "reason", kString}, {3, "evaluationError", kString}, {4, "denied", kBool}};
constexpr Message kSubjectAccessReviewStatus{"SubjectAccessReviewStatus", kSubjectAccessReviewStatusFields};
constexpr Field kSelfSubjectAccessReviewSpecFields[] = {
    {1, "resourceAttributes", kMessage, kKeep, &kResourceAttributes},
    {2, "nonResourceAttributes", kMessage, kKeep, &kNonResourceAttributes}};
constexpr Message kSelfSubjectAccessReviewSpec{"SelfSubjectAccessReviewSpec", kSelfSubjectAccessReviewSpecFields};
constexpr Field kSelfSubjectAccessReviewFields[] = {{1, "metadata", kMessage, kKeep, &kObjectMeta},
                                                    {2, "spec", kMessage, kKeep, &kSelfSubjectAccessReviewSpec},
                                                    {3, "status", kMessage, kOmitZero, &kSubjectAccessReviewStatus}};
constexpr Message kSelfSubjectAccessReview{"SelfSubjectAccessReview", kSelfSubjectAccessReviewFields};
constexpr Field kSubjectAccessReviewSpecFields[] = {
    {1, "resourceAttributes", kMessage, kKeep, &kResourceAttributes},
    {2, "nonResourceAttributes", kMessage, kKeep, &kNonResourceAttributes},
    {3, "user", kString},
    {4, "groups", kString, kRepeated},
    {6, "uid", kString}};
constexpr Message kSubjectAccessReviewSpec{"SubjectAccessReviewSpec", kSubjectAccessReviewSpecFields};
constexpr Field kSubjectAccessReviewFields[] = {{1, "metadata", kMessage, kKeep, &kObjectMeta},
                                                {2, "spec", kMessage, kKeep, &kSubjectAccessReviewSpec},
                                                {3, "status", kMessage, kOmitZero, &kSubjectAccessReviewStatus}};
constexpr Message kSubjectAccessReview{"SubjectAccessReview", kSubjectAccessReviewFields};
constexpr Field kResourceRuleFields[] = {{1, "verbs", kString, kRepeated},
                                         {2, "apiGroups", kString, kRepeated},
                                         {3, "resources", kString, kRepeated},
                                         {4, "resourceNames", kString, kRepeated}};
constexpr Message kResourceRule{"ResourceRule", kResourceRuleFields};
constexpr Field kNonResourceRuleFields[] = {{1, "verbs", kString, kRepeated},
                                            {2, "nonResourceURLs", kString, kRepeated}};
constexpr Message kNonResourceRule{"NonResourceRule", kNonResourceRuleFields};
constexpr Field kSubjectRulesReviewStatusFields[] = {{1, "resourceRules", kMessage, kRepeated, &kResourceRule},
                                                     {2, "nonResourceRules", kMessage, kRepeated, &kNonResourceRule},
                                                     {3, "incomplete", kBool, kKeep},
                                                     {4, "evaluationError", kString}};
constexpr Message kSubjectRulesReviewStatus{"SubjectRulesReviewStatus", kSubjectRulesReviewStatusFields};
constexpr Field kSelfSubjectRulesReviewSpecFields[] = {{1, "namespace", kString}};
constexpr Message kSelfSubjectRulesReviewSpec{"SelfSubjectRulesReviewSpec", kSelfSubjectRulesReviewSpecFields};
constexpr Field kSelfSubjectRulesReviewFields[] = {{1, "metadata", kMessage, kKeep, &kObjectMeta},
                                                   {2, "spec", kMessage, kKeep, &kSelfSubjectRulesReviewSpec},
                                                   {3, "status", kMessage, kOmitZero, &kSubjectRulesReviewStatus}};
constexpr Message kSelfSubjectRulesReview{"SelfSubjectRulesReview", kSelfSubjectRulesReviewFields};

// k8s.io/api authentication/v1/generated.proto: `kubectl auth whoami`.
constexpr Field kUserInfoFields[] = {{1, "username", kString}, {2, "uid", kString}, {3, "groups", kString, kRepeated}};
constexpr Message kUserInfo{"UserInfo", kUserInfoFields};
constexpr Field kSelfSubjectReviewStatusFields[] = {{1, "userInfo", kMessage, kOmitZero, &kUserInfo}};
constexpr Message kSelfSubjectReviewStatus{"SelfSubjectReviewStatus", kSelfSubjectReviewStatusFields};
constexpr Field kSelfSubjectReviewFields[] = {{1, "metadata", kMessage, kKeep, &kObjectMeta},
                                              {2, "status", kMessage, kOmitZero, &kSelfSubjectReviewStatus}};
constexpr Message kSelfSubjectReview{"SelfSubjectReview", kSelfSubjectReviewFields};

// authentication/v1 TokenRequest: `kubectl create token` (service_account_token.h).
constexpr Field kBoundObjectReferenceFields[] = {
    {1, "kind", kString}, {2, "apiVersion", kString}, {3, "name", kString}, {4, "uid", kString}};
constexpr Message kBoundObjectReference{"BoundObjectReference", kBoundObjectReferenceFields};
constexpr Field kTokenRequestSpecFields[] = {{1, "audiences", kString, kRepeated},
                                             {4, "expirationSeconds", kInt64, kKeep},
                                             {3, "boundObjectRef", kMessage, kKeep, &kBoundObjectReference}};
constexpr Message kTokenRequestSpec{"TokenRequestSpec", kTokenRequestSpecFields};
constexpr Field kTokenRequestStatusFields[] = {{1, "token", kString}, {2, "expirationTimestamp", kTime}};
constexpr Message kTokenRequestStatus{"TokenRequestStatus", kTokenRequestStatusFields};
constexpr Field kTokenRequestFields[] = {{1, "metadata", kMessage, kKeep, &kObjectMeta},
                                         {2, "spec", kMessage, kKeep, &kTokenRequestSpec},
                                         {3, "status", kMessage, kOmitZero, &kTokenRequestStatus}};
constexpr Message kTokenRequest{"TokenRequest", kTokenRequestFields};

// runtime/generated.proto: the envelope.
constexpr Field kTypeMetaFields[] = {{1, "apiVersion", kString}, {2, "kind", kString}};
constexpr Message kTypeMeta{"TypeMeta", kTypeMetaFields};

struct RootKind {
  std::string_view group;  // "" for core; "*" any group (DeleteOptions)
  std::string_view kind;
  const Message* message;
};
constexpr RootKind kRootKinds[] = {
    {"", "Namespace", &kNamespace},
    {"", "ConfigMap", &kConfigMap},
    {"", "Secret", &kSecret},
    {"", "ServiceAccount", &kServiceAccount},
    {"", "Pod", &kPod},
    {"", "Service", &kService},
    {"scheduling.k8s.io", "PriorityClass", &kPriorityClass},
    {"batch", "Job", &kJob},
    {"policy", "Eviction", &kEviction},
    {"rbac.authorization.k8s.io", "Role", &kRole},
    {"rbac.authorization.k8s.io", "ClusterRole", &kClusterRole},
    {"rbac.authorization.k8s.io", "RoleBinding", &kRoleBinding},
    {"rbac.authorization.k8s.io", "ClusterRoleBinding", &kRoleBinding},
    {"authorization.k8s.io", "SelfSubjectAccessReview", &kSelfSubjectAccessReview},
    {"authorization.k8s.io", "SubjectAccessReview", &kSubjectAccessReview},
    {"authorization.k8s.io", "LocalSubjectAccessReview", &kSubjectAccessReview},
    {"authorization.k8s.io", "SelfSubjectRulesReview", &kSelfSubjectRulesReview},
    {"authentication.k8s.io", "SelfSubjectReview", &kSelfSubjectReview},
    {"authentication.k8s.io", "TokenRequest", &kTokenRequest},
    // DeleteOptions is registered in every group version (and meta.k8s.io).
    {"*", "DeleteOptions", &kDeleteOptions},
};

// ---------------------------------------------------------------------------
// Wire reader

enum WireType : int { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

Status Malformed(std::string_view what) {
  return BadRequestError("the body of the request could not be decoded as a Kubernetes protobuf object: " +
                         std::string(what));
}

class WireReader {
 public:
  explicit WireReader(std::string_view data) : data_(data) {}
  bool Done() const { return pos_ >= data_.size(); }

  StatusOr<uint64_t> Varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size()) return Malformed("truncated varint");
      const auto b = static_cast<uint8_t>(data_[pos_++]);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
    return Malformed("varint longer than 10 bytes");
  }
  StatusOr<std::string_view> LengthDelimited() {
    BERTH_ASSIGN_OR_RETURN(uint64_t n, Varint());
    if (n > data_.size() - pos_) return Malformed("length-delimited field runs past the end");
    std::string_view out = data_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  StatusOr<uint64_t> Fixed(size_t bytes) {
    if (bytes > data_.size() - pos_) return Malformed("truncated fixed-width field");
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(data_[pos_ + i])) << (8 * i);
    pos_ += bytes;
    return v;
  }
  // Reads one tag: field number and wire type.
  Status Tag(int* number, int* wire_type) {
    BERTH_ASSIGN_OR_RETURN(uint64_t tag, Varint());
    *wire_type = static_cast<int>(tag & 7);
    const uint64_t n = tag >> 3;
    if (n == 0 || n > 536870911) return Malformed("invalid field number");
    *number = static_cast<int>(n);
    return Status::Ok();
  }
  // True when `bytes` is empty or a message whose every field is a zero value,
  // recursively: what Go's marshalers write for a struct left at its zero
  // value (JobStatus{} on a create, ...).
  static bool CarriesNothing(std::string_view bytes, int depth = 0) {
    if (bytes.empty()) return true;
    if (depth > 32) return false;
    WireReader r(bytes);
    while (!r.Done()) {
      int n = 0, wt = 0;
      if (!r.Tag(&n, &wt).ok()) return false;
      if (wt == kLengthDelimited) {
        auto v = r.LengthDelimited();
        if (!v.ok() || !CarriesNothing(*v, depth + 1)) return false;
        continue;
      }
      auto zero = r.SkipValue(wt);
      if (!zero.ok() || !*zero) return false;
    }
    return true;
  }
  // Reads a value of `wire_type`; true when it carries nothing (0, or an
  // empty or all-zero message).
  StatusOr<bool> SkipValue(int wire_type) {
    switch (wire_type) {
      case kVarint: {
        BERTH_ASSIGN_OR_RETURN(uint64_t v, Varint());
        return v == 0;
      }
      case kFixed64: {
        BERTH_ASSIGN_OR_RETURN(uint64_t v, Fixed(8));
        return v == 0;
      }
      case kFixed32: {
        BERTH_ASSIGN_OR_RETURN(uint64_t v, Fixed(4));
        return v == 0;
      }
      case kLengthDelimited: {
        BERTH_ASSIGN_OR_RETURN(std::string_view v, LengthDelimited());
        return CarriesNothing(v);
      }
      default:
        return Malformed("unsupported wire type " + std::to_string(wire_type) + " (groups are not used)");
    }
  }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

// ---------------------------------------------------------------------------
// Values

// The scalar fields of a small message (metav1.Time, resource.Quantity,
// intstr.IntOrString): per field number the last varint and the last
// length-delimited value (a field absent from a map reads as zero or empty);
// values of the other wire types are checked and skipped.
struct ScalarFields {
  std::map<int, uint64_t> varints;
  std::map<int, std::string_view> bytes;  // views into the message
};

StatusOr<ScalarFields> ReadScalarFields(std::string_view message) {
  ScalarFields out;
  WireReader r(message);
  while (!r.Done()) {
    int n = 0, wt = 0;
    BERTH_RETURN_IF_ERROR(r.Tag(&n, &wt));
    if (wt == kVarint) {
      BERTH_ASSIGN_OR_RETURN(out.varints[n], r.Varint());
    } else if (wt == kLengthDelimited) {
      BERTH_ASSIGN_OR_RETURN(out.bytes[n], r.LengthDelimited());
    } else {
      BERTH_RETURN_IF_ERROR(r.SkipValue(wt).status());
    }
  }
  return out;
}

bool IsZero(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return true;
    case json::value_t::string:
      return v.get_ref<const std::string&>().empty();
    case json::value_t::boolean:
      return !v.get<bool>();
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return v.get<int64_t>() == 0;
    case json::value_t::object:
    case json::value_t::array:
      return v.empty();
    default:
      return false;
  }
}

class Decoder {
 public:
  StatusOr<json> DecodeMessage(const Message& m, std::string_view data, const std::string& path);

 private:
  StatusOr<json> DecodeValue(const Field& f, int wire_type, WireReader& r, const std::string& path);
  StatusOr<json> DecodeLengthDelimitedValue(const Field& f, std::string_view bytes, const std::string& path);
  StatusOr<std::pair<std::string, json>> DecodeMapEntry(const Field& f, std::string_view bytes,
                                                        const std::string& path);
};

std::string Join(const std::string& path, std::string_view field) {
  return path.empty() ? std::string(field) : path + "." + std::string(field);
}

Status WrongWireType(const Field& f, const std::string& path) {
  return Malformed("wrong wire type for " + path + " (" + f.json_name + ")");
}

StatusOr<json> Decoder::DecodeLengthDelimitedValue(const Field& f, std::string_view bytes, const std::string& path) {
  switch (f.type) {
    case kString:
      if (!api::ValidUtf8(bytes)) return Malformed(path + " is not valid UTF-8");
      return json(std::string(bytes));
    case kBytes:
      return json(Base64Encode(bytes));
    case kMessage:
      return DecodeMessage(*f.message, bytes, path);
    case kTime: {  // {1: seconds, 2: nanos}; nanos are dropped, as metav1.Time does
      BERTH_ASSIGN_OR_RETURN(ScalarFields time, ReadScalarFields(bytes));
      if (bytes.empty()) return json();  // the zero time
      return json(FormatRfc3339(Time(std::chrono::seconds(static_cast<int64_t>(time.varints[1])))));
    }
    case kQuantity: {  // {1: string}
      BERTH_ASSIGN_OR_RETURN(ScalarFields quantity, ReadScalarFields(bytes));
      const std::string s(quantity.bytes[1]);
      if (!api::ValidUtf8(s)) return Malformed(path + " is not valid UTF-8");
      return json(s.empty() ? "0" : s);
    }
    case kIntOrString: {  // {1: type (0 int, 1 string), 2: intVal, 3: strVal}
      BERTH_ASSIGN_OR_RETURN(ScalarFields value, ReadScalarFields(bytes));
      if (value.varints[1] == 1) {
        const std::string str_val(value.bytes[3]);
        if (!api::ValidUtf8(str_val)) return Malformed(path + " is not valid UTF-8");
        return json(str_val);
      }
      return json(static_cast<int32_t>(value.varints[2]));
    }
    default:
      return WrongWireType(f, path);
  }
}

StatusOr<std::pair<std::string, json>> Decoder::DecodeMapEntry(const Field& f, std::string_view bytes,
                                                               const std::string& path) {
  WireReader r(bytes);
  std::string key;
  json value;
  bool has_value = false;
  while (!r.Done()) {
    int n = 0, wt = 0;
    BERTH_RETURN_IF_ERROR(r.Tag(&n, &wt));
    if (n == 1 && wt == kLengthDelimited) {
      BERTH_ASSIGN_OR_RETURN(std::string_view k, r.LengthDelimited());
      if (!api::ValidUtf8(k)) return Malformed(path + " has a key that is not valid UTF-8");
      key = std::string(k);
    } else if (n == 2) {
      BERTH_ASSIGN_OR_RETURN(value, DecodeValue(f, wt, r, path + "[" + key + "]"));
      has_value = true;
    } else {
      BERTH_RETURN_IF_ERROR(r.SkipValue(wt).status());
    }
  }
  if (!has_value) {
    // An absent value is the zero value of the map's value type.
    value = f.type == kQuantity ? json("0") : json("");
  }
  return std::make_pair(std::move(key), std::move(value));
}

StatusOr<json> Decoder::DecodeValue(const Field& f, int wire_type, WireReader& r, const std::string& path) {
  switch (f.type) {
    case kBool:
    case kInt32:
    case kInt64: {
      if (wire_type != kVarint) return WrongWireType(f, path);
      BERTH_ASSIGN_OR_RETURN(uint64_t v, r.Varint());
      if (f.type == kBool) return json(v != 0);
      if (f.type == kInt32) return json(static_cast<int32_t>(v));
      return json(static_cast<int64_t>(v));
    }
    default: {
      if (wire_type != kLengthDelimited) return WrongWireType(f, path);
      BERTH_ASSIGN_OR_RETURN(std::string_view bytes, r.LengthDelimited());
      return DecodeLengthDelimitedValue(f, bytes, path);
    }
  }
}

StatusOr<json> Decoder::DecodeMessage(const Message& m, std::string_view data, const std::string& path) {
  WireReader r(data);
  json out = json::object();
  while (!r.Done()) {
    int number = 0, wire_type = 0;
    BERTH_RETURN_IF_ERROR(r.Tag(&number, &wire_type));
    const Field* f = m.Find(number);
    if (f == nullptr) {
      BERTH_ASSIGN_OR_RETURN(bool zero, r.SkipValue(wire_type));
      if (zero) continue;
      return UnsupportedMediaError("berth does not decode field " + std::to_string(number) + " of the protobuf " +
                                   m.name + (path.empty() ? std::string() : " at " + path) +
                                   "; send the object as JSON or YAML (kubectl create -f / apply -f)");
    }
    const std::string field_path = Join(path, f->json_name);
    if (f->flags & kMap) {
      if (wire_type != kLengthDelimited) return WrongWireType(*f, field_path);
      BERTH_ASSIGN_OR_RETURN(std::string_view entry, r.LengthDelimited());
      BERTH_ASSIGN_OR_RETURN(auto kv, DecodeMapEntry(*f, entry, field_path));
      out[f->json_name][kv.first] = std::move(kv.second);
      continue;
    }
    BERTH_ASSIGN_OR_RETURN(json value, DecodeValue(*f, wire_type, r, field_path));
    if (f->flags & kRepeated) {
      json& list = out[f->json_name];
      if (list.is_null()) list = json::array();
      list.push_back(std::move(value));
      continue;
    }
    if (f->flags & kInline) {
      for (auto& [k, v] : value.items()) out[k] = std::move(v);
      continue;
    }
    if (!(f->flags & kKeep) && IsZero(value)) {
      out.erase(f->json_name);  // a later zero value replaces an earlier one
      continue;
    }
    if (value.is_null()) continue;         // a zero Time behind a pointer reads as unset
    out[f->json_name] = std::move(value);  // last one wins, as in protobuf
  }
  return out;
}

const Message* RootMessage(std::string_view group, std::string_view kind) {
  for (const RootKind& k : kRootKinds) {
    if (k.kind == kind && (k.group == group || k.group == "*")) return k.message;
  }
  return nullptr;
}

Status UnknownFormat() {
  return UnsupportedMediaError(
      "the body of the request was in an unknown format - accepted media types include: "
      "application/json, application/yaml");
}

}  // namespace

bool IsProtobufContentType(std::string_view content_type) {
  std::string_view media = content_type.substr(0, content_type.find(';'));
  while (!media.empty() && media.back() == ' ') media.remove_suffix(1);
  return media == kProtobufMediaType;
}

StatusOr<json> DecodeProtobufMessage(std::string_view api_version, std::string_view kind, std::string_view raw) {
  const size_t slash = api_version.find('/');
  const std::string_view group = slash == std::string_view::npos ? std::string_view() : api_version.substr(0, slash);
  const Message* m = RootMessage(group, kind);
  if (m == nullptr) return UnknownFormat();
  return Decoder().DecodeMessage(*m, raw, "");
}

StatusOr<json> DecodeProtobufObject(std::string_view body) {
  static constexpr std::string_view kMagic("k8s\0", 4);
  if (body.substr(0, kMagic.size()) != kMagic) return Malformed("missing the \"k8s\\x00\" prefix");
  WireReader r(body.substr(kMagic.size()));
  std::string api_version, kind, content_encoding;
  std::string_view raw;
  while (!r.Done()) {
    int n = 0, wt = 0;
    BERTH_RETURN_IF_ERROR(r.Tag(&n, &wt));
    if (wt != kLengthDelimited) {
      BERTH_RETURN_IF_ERROR(r.SkipValue(wt).status());
      continue;
    }
    BERTH_ASSIGN_OR_RETURN(std::string_view v, r.LengthDelimited());
    if (n == 1) {
      BERTH_ASSIGN_OR_RETURN(json tm, Decoder().DecodeMessage(kTypeMeta, v, "typeMeta"));
      api_version = tm.value("apiVersion", "");
      kind = tm.value("kind", "");
    } else if (n == 2) {
      raw = v;
    } else if (n == 3) {
      content_encoding = std::string(v);
    }
  }
  if (!content_encoding.empty()) return Malformed("unsupported content encoding \"" + content_encoding + "\"");
  if (kind.empty()) return Malformed("Object 'Kind' is missing");
  BERTH_ASSIGN_OR_RETURN(json obj, DecodeProtobufMessage(api_version, kind, raw));
  // apiVersion and kind first, as the JSON serializer writes them.
  json out = {{"apiVersion", api_version}, {"kind", kind}};
  for (auto& [k, v] : obj.items()) out[k] = std::move(v);
  return out;
}

}  // namespace berth::apiserver
