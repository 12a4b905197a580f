// Entry points of the Swift runtime (libswiftCore, linked into every Swift program) that the standard
// library does not surface. Declared with their C signatures from the runtime's HeapObject.h.
#ifndef OCD_CSWIFTRUNTIME_H
#define OCD_CSWIFTRUNTIME_H

/// Takes a strong reference to a native Swift object unless its deinitialization has begun: returns the
/// object, or NULL. (A weak reference does the same, at the price of a side table for the object.)
void *_Nullable swift_tryRetain(void *_Nonnull object);

// Finding a function a loaded library keeps to itself (decision D25): Observation's thread-local access
// list is read by a hidden function, `_swift_observation_tls_get`, whose only trace outside the library's
// code is its entry in the library file's symbol table (`.symtab`, absent when the file is stripped).

#if defined(__linux__) && defined(__ELF__) && defined(__LP64__)
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct ocd_loaded_library {
    const char *_Nonnull suffix;
    uintptr_t base;
    char path[4096];
    int found;
};

static int ocd_match_library(struct dl_phdr_info *_Nonnull info, size_t size, void *_Nullable data) {
    (void)size;
    struct ocd_loaded_library *library = (struct ocd_loaded_library *)data;
    const char *name = info->dlpi_name;
    if (name == NULL) return 0;
    size_t length = strlen(name), suffixLength = strlen(library->suffix);
    if (length < suffixLength || length >= sizeof(library->path)) return 0;
    if (strcmp(name + length - suffixLength, library->suffix) != 0) return 0;
    library->base = (uintptr_t)info->dlpi_addr;
    memcpy(library->path, name, length + 1);
    library->found = 1;
    return 1;
}

/// The address of the function `symbol`, exported or not, of the loaded library whose path ends with
/// `suffix` (a "/" and its file name), read from the library file's symbol table. NULL when no such
/// library is loaded, its file has no symbol table, or the table has no function of that name.
static inline void *_Nullable ocd_library_function(const char *_Nonnull suffix, const char *_Nonnull symbol) {
    struct ocd_loaded_library library;
    memset(&library, 0, sizeof(library));
    library.suffix = suffix;
    dl_iterate_phdr(ocd_match_library, &library);
    if (!library.found) return NULL;
    int file = open(library.path, O_RDONLY | O_CLOEXEC);
    if (file < 0) return NULL;
    struct stat status;
    if (fstat(file, &status) != 0 || status.st_size < (off_t)sizeof(Elf64_Ehdr)) { close(file); return NULL; }
    size_t size = (size_t)status.st_size;
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, file, 0);
    close(file);
    if (map == MAP_FAILED) return NULL;
    const unsigned char *bytes = (const unsigned char *)map;
    const Elf64_Ehdr *header = (const Elf64_Ehdr *)map;
    size_t symbolLength = strlen(symbol);
    void *result = NULL;
    if (memcmp(header->e_ident, ELFMAG, SELFMAG) == 0 && header->e_ident[EI_CLASS] == ELFCLASS64
        && header->e_shentsize == sizeof(Elf64_Shdr) && header->e_shoff > 0
        && header->e_shoff <= size && (size - header->e_shoff) / sizeof(Elf64_Shdr) >= header->e_shnum) {
        const Elf64_Shdr *sections = (const Elf64_Shdr *)(bytes + header->e_shoff);
        for (unsigned index = 0; index < header->e_shnum && result == NULL; index++) {
            const Elf64_Shdr *table = &sections[index];
            if (table->sh_type != SHT_SYMTAB || table->sh_entsize != sizeof(Elf64_Sym)) continue;
            if (table->sh_link >= header->e_shnum) continue;
            const Elf64_Shdr *names = &sections[table->sh_link];
            if (table->sh_offset > size || table->sh_size > size - table->sh_offset) continue;
            if (names->sh_offset > size || names->sh_size > size - names->sh_offset) continue;
            const Elf64_Sym *symbols = (const Elf64_Sym *)(bytes + table->sh_offset);
            const char *text = (const char *)(bytes + names->sh_offset);
            size_t count = table->sh_size / sizeof(Elf64_Sym);
            for (size_t entry = 0; entry < count; entry++) {
                const Elf64_Sym *candidate = &symbols[entry];
                if (ELF64_ST_TYPE(candidate->st_info) != STT_FUNC || candidate->st_shndx == SHN_UNDEF
                    || candidate->st_value == 0 || candidate->st_name >= names->sh_size
                    || names->sh_size - candidate->st_name <= symbolLength) continue;
                const char *name = text + candidate->st_name;
                if (memcmp(name, symbol, symbolLength + 1) == 0) {
                    result = (void *)(library.base + candidate->st_value);
                    break;
                }
            }
        }
    }
    munmap(map, size);
    return result;
}
#else
static inline void *_Nullable ocd_library_function(const char *_Nonnull suffix, const char *_Nonnull symbol) {
    (void)suffix; (void)symbol;
    return NULL;
}
#endif

/// Calls `function`, a Swift-convention function of no arguments returning a pointer.
static inline void *_Nullable ocd_call_pointer_function(void *_Nonnull function) {
#if defined(__clang__)
    return ((void *_Nullable (__attribute__((swiftcall)) *)(void))function)();
#else
    return ((void *_Nullable (*)(void))function)();
#endif
}

#endif
