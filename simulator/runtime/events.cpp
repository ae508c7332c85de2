// Events (cudaEvent*, cudaStreamWaitEvent): launches and copies are synchronous, so an event is
// complete when it is recorded; it keeps the host clock at that moment for cudaEventElapsedTime.
#include "graphs_internal.h"

#include <chrono>
#include <set>

// An event: when it was last recorded (host clock; launches are synchronous).
struct CUevent_st {
    unsigned int flags = 0;
    bool recorded = false;
    std::chrono::steady_clock::time_point when;
};

namespace __sim {
namespace {
std::set<const CUevent_st*> g_events;  // live events (guarded by g_state_mu)

bool live_event(const CUevent_st* e) { return e != nullptr && g_events.count(e) != 0; }
}  // namespace

bool event_is_live(cudaEvent_t event) {
    std::lock_guard<std::mutex> lock(g_state_mu);
    return live_event(event);
}
}  // namespace __sim

using __sim::g_state_mu;
using __sim::sticky_error;

extern "C" {

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
    if (event == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    const unsigned int known = cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess;
    if ((flags & ~known) != 0) return __sim::set_error(cudaErrorInvalidValue);
    if ((flags & cudaEventInterprocess) && !(flags & cudaEventDisableTiming)) {
        return __sim::set_error(cudaErrorInvalidValue);  // CUDA's rule for interprocess events
    }
    if (cudaError_t e = sticky_error()) return e;
    CUevent_st* e = new CUevent_st();
    e->flags = flags;
    std::lock_guard<std::mutex> lock(g_state_mu);
    __sim::g_events.insert(e);
    *event = e;
    return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* event) { return cudaEventCreateWithFlags(event, cudaEventDefault); }

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
    // launches and copies are synchronous: everything before is done
    if (!__sim::known_stream(stream)) return __sim::set_error(cudaErrorInvalidResourceHandle);
    std::lock_guard<std::mutex> lock(g_state_mu);
    if (!__sim::live_event(event)) return __sim::set_error(cudaErrorInvalidResourceHandle);
    event->recorded = true;
    event->when = std::chrono::steady_clock::now();
    return sticky_error();
}

cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags) {
    if (flags > cudaEventRecordExternal) return __sim::set_error(cudaErrorInvalidValue);
    cudaError_t captured;
    if (flags == cudaEventRecordExternal && __sim::capture_event_node(cudaGraphNodeTypeEventRecord, event, &captured))
        return captured;
    return cudaEventRecord(event, stream);
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
    std::lock_guard<std::mutex> lock(g_state_mu);
    if (!__sim::live_event(event)) return __sim::set_error(cudaErrorInvalidResourceHandle);
    return sticky_error();
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) { return cudaEventQuery(event); }

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
    if (ms == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> lock(g_state_mu);
    if (!__sim::live_event(start) || !__sim::live_event(end)) return __sim::set_error(cudaErrorInvalidResourceHandle);
    if (cudaError_t e = sticky_error()) return e;
    // As on a GPU: both events must have been recorded, and both with timing enabled.
    if (!start->recorded || !end->recorded || ((start->flags | end->flags) & cudaEventDisableTiming)) {
        return __sim::set_error(cudaErrorInvalidResourceHandle);
    }
    *ms = std::chrono::duration<float, std::milli>(end->when - start->when).count();
    return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
    std::lock_guard<std::mutex> lock(g_state_mu);
    if (!__sim::live_event(event)) return __sim::set_error(cudaErrorInvalidResourceHandle);
    __sim::g_events.erase(event);
    delete event;
    return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
    if (!__sim::known_stream(stream)) return __sim::set_error(cudaErrorInvalidResourceHandle);
    if (flags > cudaEventWaitExternal) return __sim::set_error(cudaErrorInvalidValue);
    cudaError_t captured;
    if (flags == cudaEventWaitExternal && __sim::capture_event_node(cudaGraphNodeTypeWaitEvent, event, &captured))
        return captured;
    std::lock_guard<std::mutex> lock(g_state_mu);
    if (!__sim::live_event(event)) return __sim::set_error(cudaErrorInvalidResourceHandle);
    return sticky_error();
}

}  // extern "C"
