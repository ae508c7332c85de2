// Streams. Every stream runs in order with the host (work is done when its call returns), so a
// stream is only a handle: created streams are kept so that a call on a garbage or destroyed
// handle is refused with cudaErrorInvalidResourceHandle, as a GPU refuses it. A host function
// enqueued on a stream (cudaLaunchHostFunc) runs at once, or becomes a graph node while a capture
// is active. Stream attributes are kept per stream and read back; the access policy
// window is checked as CUDA checks it (there is no cache to steer).
#include "graph_state.h"

#include <cstring>
#include <map>
#include <set>

// A created stream: nothing to hold but its identity.
struct CUstream_st {
    unsigned int flags = 0;
};

namespace __sim {
namespace {

std::mutex g_stream_mu;
std::set<const CUstream_st*> g_streams;  // created, not destroyed
// cudaStreamSetAttribute's values, per attribute and stream (g_stream_mu guards them).
std::map<cudaStream_t, cudaLaunchAttributeValue> g_window, g_sync_policy, g_priority;

std::map<cudaStream_t, cudaLaunchAttributeValue>* attribute_table(cudaStreamAttrID attr) {
    switch (attr) {
        case cudaLaunchAttributeAccessPolicyWindow: return &g_window;
        case cudaLaunchAttributeSynchronizationPolicy: return &g_sync_policy;
        case cudaLaunchAttributePriority: return &g_priority;
        default: return nullptr;
    }
}

// The handles <cuda_runtime_api.h> and <cuda_device_runtime_api.h> define: cudaStreamLegacy (1),
// cudaStreamPerThread (2); in device code also cudaStreamTailLaunch (3), cudaStreamFireAndForget (4).
constexpr uintptr_t kLastHostHandle = 2, kLastDeviceHandle = 4;

}  // namespace

bool known_stream(cudaStream_t stream) {
    const uintptr_t handle = reinterpret_cast<uintptr_t>(stream);
    if (handle <= kLastHostHandle) return true;
    if (handle <= kLastDeviceHandle && device_launch_running() != nullptr) return true;
    std::lock_guard<std::mutex> lock(g_stream_mu);
    return g_streams.count(stream) != 0;
}

}  // namespace __sim

using __sim::sticky_error;

using __sim::NodeOp;
using __sim::g_graph_mu;
using __sim::set_error;

extern "C" {

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) {
    if (stream == nullptr || (flags != cudaStreamDefault && flags != cudaStreamNonBlocking))
        return __sim::set_error(cudaErrorInvalidValue);
    if (cudaError_t e = sticky_error()) return e;
    auto* s = new CUstream_st{flags};
    std::lock_guard<std::mutex> lock(__sim::g_stream_mu);
    __sim::g_streams.insert(s);
    *stream = s;
    return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) { return cudaStreamCreateWithFlags(stream, cudaStreamDefault); }

cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned int flags, int priority) {
    (void)priority;  // clamped to the range on a GPU; one order here
    return cudaStreamCreateWithFlags(stream, flags);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
    if (reinterpret_cast<uintptr_t>(stream) <= __sim::kLastHostHandle) return sticky_error();
    {
        std::lock_guard<std::mutex> lock(__sim::g_stream_mu);
        if (__sim::g_streams.erase(stream) == 0) return __sim::set_error(cudaErrorInvalidResourceHandle);
    }
    delete stream;
    return sticky_error();
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
    if (!__sim::known_stream(stream)) return __sim::set_error(cudaErrorInvalidResourceHandle);
    return sticky_error();
}

cudaError_t cudaStreamQuery(cudaStream_t stream) {
    if (!__sim::known_stream(stream)) return __sim::set_error(cudaErrorInvalidResourceHandle);
    return sticky_error();
}

cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void* user_data,
                                  unsigned int flags) {
    if (callback == nullptr || flags != 0) return __sim::set_error(cudaErrorInvalidValue);
    if (!__sim::known_stream(stream)) return __sim::set_error(cudaErrorInvalidResourceHandle);
    callback(stream, sticky_error(), user_data);  // a callback also runs after a fault, told of it
    return cudaSuccess;
}

cudaError_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest) {
    if (least != nullptr) *least = 0;
    if (greatest != nullptr) *greatest = -5;
    return cudaSuccess;
}

// Work in a stream is done when the call returns, so a host function runs at once, in order.
cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* user_data) {
    if (fn == nullptr) return set_error(cudaErrorInvalidValue);
    if (cudaError_t e = __sim::sticky_error()) return e;
    if (__sim::capturing(stream)) {
        NodeOp n;
        n.type = cudaGraphNodeTypeHost;
        n.host = cudaHostNodeParams{fn, user_data};
        std::lock_guard<std::mutex> lock(g_graph_mu);
        if (__sim::g_capture_active.load()) return __sim::capture_node(std::move(n));
    }
    fn(user_data);
    return cudaSuccess;
}

cudaError_t cudaStreamSetAttribute(cudaStream_t stream, cudaStreamAttrID attr, const cudaStreamAttrValue* value) {
    if (value == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    auto* table = __sim::attribute_table(attr);
    if (table == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    if (attr == cudaLaunchAttributeAccessPolicyWindow) {
        const cudaAccessPolicyWindow& w = value->accessPolicyWindow;
        cudaDeviceProp prop;
        cudaGetDeviceProperties(&prop, 0);
        if (w.num_bytes > (size_t)prop.accessPolicyMaxWindowSize || !(w.hitRatio >= 0.0f && w.hitRatio <= 1.0f) ||
            (int)w.hitProp < 0 || (int)w.hitProp > 2 || (int)w.missProp < 0 || (int)w.missProp > 2)
            return __sim::set_error(cudaErrorInvalidValue);
    }
    std::lock_guard<std::mutex> lock(__sim::g_stream_mu);
    (*table)[stream] = *value;
    return __sim::sticky_error();
}

cudaError_t cudaStreamGetAttribute(cudaStream_t stream, cudaStreamAttrID attr, cudaStreamAttrValue* value) {
    if (value == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    auto* table = __sim::attribute_table(attr);
    if (table == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> lock(__sim::g_stream_mu);
    auto it = table->find(stream);
    std::memset(value, 0, sizeof(*value));
    if (it != table->end()) {
        *value = it->second;
    } else if (attr == cudaLaunchAttributeSynchronizationPolicy) {
        value->syncPolicy = cudaSyncPolicyAuto;
    }
    return __sim::sticky_error();
}

}  // extern "C"
