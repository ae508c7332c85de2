// sim-runtime: per mode
// Device memory (cudaMalloc, managed and graph allocations), laid out as a GPU lays it out.
//
// A GPU's allocator hands out small allocations side by side from 2 MiB pages, 512-byte
// aligned, and large ones as whole 2 MiB pages. So a kernel that reads or writes a little past
// the end of a buffer touches the next buffer or the page's unused rest, and runs on: a program
// with such an overrun can pass on a GPU (compute-sanitizer's memcheck names it). Here fast,
// synccheck and the shared-memory racecheck take device memory from pages of their own in the
// same way, never from the C heap, so an overrun lands in device memory as on a GPU instead of
// corrupting the simulator's own heap. memcheck and racecheck keep each allocation in the C heap
// at its exact size, where the byte after it is a redzone their sanitizer reports.
//
// Each modelled device has SIMULATOR_DEVICE_MEMORY_MIB of memory (default: the host's physical
// memory), and an allocation past what is left fails, as on a GPU, instead of growing the host's
// memory until its OOM killer ends some process.
#include "sim_internal.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <iterator>
#include <unordered_map>

namespace __sim {

namespace {

// What each device's live allocations take, and who took what (to give it back on free).
struct Books {
    std::mutex mu;
    size_t in_use[kMaxDevices] = {};
    std::unordered_map<uintptr_t, std::pair<int, size_t>> owner;
};

Books& books() {
    static Books* b = new Books;  // outlives every static destructor that may still free device memory
    return *b;
}

void* raw_alloc(size_t size);
void raw_free(void* p);

}  // namespace

size_t device_memory_total() {
    static const size_t total = [] {
        const long mib = knob_value("SIMULATOR_DEVICE_MEMORY_MIB", 0);
        if (mib > 0) return (size_t)mib << 20;
        return (size_t)sysconf(_SC_PHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
    }();
    return total;
}

size_t device_memory_used(int device) {
    Books& b = books();
    std::lock_guard<std::mutex> lock(b.mu);
    return device >= 0 && device < kMaxDevices ? b.in_use[device] : 0;
}

// Zero-filled, on the current device's books; nullptr past the device's memory or the host's.
void* device_alloc(size_t size) {
    Books& b = books();
    const int device = current_device();
    const size_t total = device_memory_total();
    {
        std::lock_guard<std::mutex> lock(b.mu);
        if (size > total - b.in_use[device]) return nullptr;
        b.in_use[device] += size;  // held while the memory is made, so two threads cannot both fit
    }
    void* p = raw_alloc(size);
    std::lock_guard<std::mutex> lock(b.mu);
    if (p == nullptr) {
        b.in_use[device] -= size;
        return nullptr;
    }
    b.owner[reinterpret_cast<uintptr_t>(p)] = {device, size};
    return p;
}

// The books and the memory total are made before main (and before any static object of the program
// that allocates): their first use on two host threads at once would otherwise meet in the guard of
// a function-local static, whose fast path an uninstrumented runtime hides from ThreadSanitizer.
__attribute__((constructor(101))) void make_the_books_early() {
    books();
    device_memory_total();
}

void device_free(void* p) {
    if (p == nullptr) return;
    {
        Books& b = books();
        std::lock_guard<std::mutex> lock(b.mu);
        auto it = b.owner.find(reinterpret_cast<uintptr_t>(p));
        if (it == b.owner.end()) return;  // not device memory: nothing to give back
        b.in_use[it->second.first] -= it->second.second;
        b.owner.erase(it);
    }
    raw_free(p);
}

namespace {

#if defined(SIM_MEMCHECK) || defined(SIM_RACECHECK)

void* raw_alloc(size_t size) {
    return std::calloc(1, size);  // exact size, so the byte after the buffer is a redzone
}

void raw_free(void* p) { std::free(p); }

#else

constexpr size_t kGranule = 512;        // a GPU's cudaMalloc alignment and rounding
constexpr size_t kPage = size_t(2) << 20;  // a GPU's large page: the unit of large allocations
constexpr size_t kSmallLimit = kPage / 2;  // larger allocations get pages of their own

size_t round_up(size_t n, size_t unit) { return (n + unit - 1) / unit * unit; }

// ``bytes`` (a multiple of kPage) of fresh memory at a kPage boundary, backed by the kernel's 2 MiB
// pages where it has them (transparent huge pages): a GPU maps device memory in such pages, and
// a kernel whose threads walk down a matrix's columns would otherwise miss the TLB at every row.
void* map_pages(size_t bytes) {
    const size_t span = bytes + kPage;  // room to move the start to a page boundary
    void* p = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    const uintptr_t start = reinterpret_cast<uintptr_t>(p);
    const uintptr_t aligned = round_up(start, kPage);
    if (aligned > start) munmap(p, aligned - start);
    if (const size_t tail = start + span - (aligned + bytes); tail > 0) munmap(reinterpret_cast<void*>(aligned + bytes), tail);
    madvise(reinterpret_cast<void*>(aligned), bytes, MADV_HUGEPAGE);  // advice only: no huge pages is fine
    return reinterpret_cast<void*>(aligned);
}

struct Heap {
    std::mutex mu;
    std::map<uintptr_t, size_t> free_spans;  // unused parts of the small-allocation pages, by address
    std::map<uintptr_t, size_t> small;       // live small allocations: rounded size
    std::map<uintptr_t, size_t> large;       // live large allocations: mapped size

    // First fit in address order: consecutive allocations sit side by side, as on a GPU.
    void* take_small(size_t bytes) {
        for (auto it = free_spans.begin(); it != free_spans.end(); ++it) {
            if (it->second < bytes) continue;
            const uintptr_t a = it->first;
            const size_t rest = it->second - bytes;
            free_spans.erase(it);
            if (rest > 0) free_spans[a + bytes] = rest;
            small[a] = bytes;
            // A freed span holds an earlier buffer's bytes: fresh device memory reads as zeros.
            std::memset(reinterpret_cast<void*>(a), 0, bytes);
            return reinterpret_cast<void*>(a);
        }
        void* page = map_pages(kPage);  // never unmapped: a GPU's pool keeps its pages too
        if (page == nullptr) return nullptr;
        const uintptr_t a = reinterpret_cast<uintptr_t>(page);
        free_spans[a + bytes] = kPage - bytes;
        small[a] = bytes;
        return page;  // a fresh mapping is zero-filled already
    }

    // Returns a span to the free list, joined with free neighbours.
    void give_back(uintptr_t a, size_t bytes) {
        auto next = free_spans.lower_bound(a);
        if (next != free_spans.end() && a + bytes == next->first) {
            bytes += next->second;
            next = free_spans.erase(next);
        }
        if (next != free_spans.begin()) {
            auto prev = std::prev(next);
            if (prev->first + prev->second == a) {
                prev->second += bytes;
                return;
            }
        }
        free_spans[a] = bytes;
    }
};

Heap& heap() {
    static Heap* h = new Heap;  // outlives every static destructor that may still free device memory
    return *h;
}

// Zero-filled, as a GPU's fresh pages are (programs sum into them without a memset).
void* raw_alloc(size_t size) {
    Heap& h = heap();
    const size_t bytes = round_up(size == 0 ? 1 : size, kGranule);
    std::lock_guard<std::mutex> lock(h.mu);
    if (bytes <= kSmallLimit) return h.take_small(bytes);
    const size_t mapped = round_up(bytes, kPage);
    void* p = map_pages(mapped);
    if (p != nullptr) h.large[reinterpret_cast<uintptr_t>(p)] = mapped;
    return p;
}

void raw_free(void* p) {
    Heap& h = heap();
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    std::lock_guard<std::mutex> lock(h.mu);
    if (auto it = h.small.find(a); it != h.small.end()) {
        h.give_back(a, it->second);
        h.small.erase(it);
    } else if (auto big = h.large.find(a); big != h.large.end()) {
        munmap(p, big->second);
        h.large.erase(big);
    }
}

#endif

}  // namespace

}  // namespace __sim
