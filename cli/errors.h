// Error texts as kubectl prints them (k8s.io/kubectl/pkg/cmd/util/helpers.go:
// checkErr, StandardErrorMessage, MultilineError, AddSourceToErr).
//
//   API error           Error from server (NotFound): pods "x" not found
//   with a source       Error from server (BadRequest): error when creating "f.yaml": <message>
//   Invalid             The ClusterQueue "x" is invalid: spec.a: Invalid value: ...
//                       (several causes: "...is invalid: " then "* field: message" lines;
//                       none: just `The ClusterQueue "x" is invalid`)
//   Unauthorized        error: You must be logged in to the server (<message>)
//   connection refused  The connection to the server 127.0.0.1:1 was refused - did you
//                       specify the right host or port?
//   other transport     Unable to connect to the server: <error>
//   client-side         error: <message>
//
// Statuses from the server are those decoded by client/api_status.h; those
// from the transport carry Go's url.Error text (`Get "http://h:p/path": ...`,
// client/http_client.h). Client-side failures (unknown resource type, bad
// flags, timeouts of `wait`) are made with ClientError so they print as
// `error: ...`. For Invalid, kubectl takes the Kind and name from the
// Status details; apimachinery's NewInvalid writes them at the start of the
// message (`ClusterQueue.kueue.x-k8s.io "x" is invalid: ...`), which is where
// they are read from here.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace berth::cli {

// A failure on this side (no server response): printed as "error: <message>".
Status ClientError(std::string message);
bool IsClientError(const Status& status);

// AddSourceToErr: "error when <verb> \"<source>\": " in front of a server
// error's message (verb: "creating", "patching", "deleting", "retrieving current configuration of").
Status AddSource(const Status& status, std::string_view verb, std::string_view source);

// The text kubectl prints for status (ending in a newline).
std::string ErrorText(const Status& status);

}  // namespace berth::cli
