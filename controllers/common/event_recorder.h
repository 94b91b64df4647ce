// The EventRecorder controllers use: client/event_recorder.h (client-go's
// record.EventRecorder with its correlator), named in this namespace so that every
// controller writes `EventRecorder` and `kEventTypeNormal` as before.
#pragma once

#include "client/event_recorder.h"

namespace berth::controllers {

using client::EventRecorder;
using client::kEventTypeNormal;
using client::kEventTypeWarning;

}  // namespace berth::controllers
