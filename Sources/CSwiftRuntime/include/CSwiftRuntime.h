// Entry points of the Swift runtime (libswiftCore, linked into every Swift program) that the standard
// library does not surface, and a lookup of a loaded library's hidden functions (decision D25).
//
// This header includes no system header but <stddef.h>: a module that set feature macros such as
// _GNU_SOURCE before including glibc's headers would define glibc's types (fd_set among them) unlike
// every other module, and Swift refuses to import both. The code that needs <link.h> lives in
// LibraryFunction.c, where its feature macros stay private.
#ifndef OCD_CSWIFTRUNTIME_H
#define OCD_CSWIFTRUNTIME_H

#include <stddef.h>

/// Takes a strong reference to a native Swift object unless its deinitialization has begun: returns the
/// object, or NULL. (A weak reference does the same, at the price of a side table for the object.)
/// Declared with its C signature from the runtime's HeapObject.h.
void *_Nullable swift_tryRetain(void *_Nonnull object);

/// Copies the GNU build ID out of `size` bytes of ELF notes (4-byte aligned, in the machine's byte
/// order) into `out`, which holds 64 bytes; returns its length, 0 if there is none or the notes are
/// damaged.
size_t ocd_note_build_id(const unsigned char *_Nonnull notes, size_t size, unsigned char *_Nonnull out);

/// The address of the function `symbol`, exported or not, of the loaded library whose path ends with
/// `suffix` (a "/" and its file name), read from the library file's symbol table (`.symtab`). NULL when
/// no such library is loaded, its file is not the loaded one (build IDs differ or are missing), the file
/// has no symbol table, the table has no function of that name, or its address is not in the loaded
/// code. Always NULL but on x86_64 Linux, where it was verified (on arm64 an indirect call into a
/// function without a branch-target landing pad can fault where BTI is enforced).
void *_Nullable ocd_library_function(const char *_Nonnull suffix, const char *_Nonnull symbol);

/// CoreFoundation's `CFNumberCreate`, which swift-corelibs-foundation links into libFoundation and
/// exports: `NSNumber(value:)` calls it, then casts its result with a checked dynamic cast (a quarter of
/// making the number) before handing it out as the `NSNumber` it is (decision D36). `type` is a
/// `CFNumberType`; the result is retained (+1), or NULL.
const void *_Nullable ocd_cf_number_create(const void *_Nullable allocator, long type, const void *_Nonnull value)
    __asm__("CFNumberCreate");

/// The calling thread's pending fault record (FaultCreation in OCDGraph), NULL when none is set.
void *_Nullable ocd_pending_fault(void);

/// Sets the calling thread's pending fault record.
void ocd_set_pending_fault(void *_Nullable pending);

/// Calls `function`, a Swift-convention function of no arguments returning a pointer.
static inline void *_Nullable ocd_call_pointer_function(void *_Nonnull function) {
#if defined(__clang__)
    return ((void *_Nullable (__attribute__((swiftcall)) *)(void))function)();
#else
    return ((void *_Nullable (*)(void))function)();
#endif
}

#endif
