// `describe` output as kubectl's generic describer prints any object
// (k8s.io/kubectl/pkg/describe: genericDescriber, printUnstructuredContent,
// smartLabelFor, DescribeEvents in describe.go):
//
//   Name:         cluster-queue
//   Namespace:
//   Labels:       <none>
//   Annotations:  <none>
//   API Version:  kueue.x-k8s.io/v1beta2
//   Kind:         ClusterQueue
//   Metadata:
//     Creation Timestamp:  2026-01-01T00:00:00Z
//     ...
//   Spec:
//     Resource Groups:
//       Covered Resources:
//         cpu
//   ...
//   Events:       <none>
//
// Fields are printed in key order, nested maps indented by two spaces per
// level, list items of maps one level deeper without markers, scalars as
// Go's %v prints them (null as <nil>). metadata.managedFields, name,
// namespace, labels and annotations are not repeated under Metadata; the
// last-applied-configuration annotation is hidden; annotations longer than
// 140 characters or with newlines are printed on their own lines.
// Keys are "smart labels": camelCase split into Title Case words with the
// acronyms API, URL, UID, OSB, GUID upper-cased; keys with characters other
// than letters and '-' are printed as they are.
// Events (core/v1, sorted by lastTimestamp, oldest first): a table
// Type/Reason/Age/From/Message; Age is the first-seen age, or
// "<last> (x<count> over <first>)" when count > 1 or a series is set;
// From is source.component, else reportingComponent. None: "Events: <none>".
// Ages are computed at `now`.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"

namespace berth::cli {

// smartLabelFor: "nominalQuota" -> "Nominal Quota", "apiVersion" -> "API Version".
std::string SmartLabel(std::string_view field);

// The whole description of obj with its events.
std::string DescribeObject(const nlohmann::json& obj, const std::vector<nlohmann::json>& events, Time now);

// The field selector that finds an object's events (as kubectl's
// searchEvents builds it): involvedObject.name, .namespace, .kind, .uid.
std::string EventFieldSelector(const nlohmann::json& obj);

}  // namespace berth::cli
