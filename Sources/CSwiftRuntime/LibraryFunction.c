// Finding a function a loaded library keeps to itself (decision D25): Observation's thread-local access
// list is read by a hidden function, `_swift_observation_tls_get`, whose only trace outside the library's
// code is its entry in the library file's symbol table (`.symtab`, absent when the file is stripped).
// The file is trusted only if its GNU build ID is the loaded library's (a toolchain replaced on disk while
// a process runs must not be read for the old one), and the address only if it is in the library's
// loaded code.

// <link.h> declares `dl_iterate_phdr` only with _GNU_SOURCE, which must come before any system header;
// it is set here, in a file of its own, and never in the module's header (see CSwiftRuntime.h).
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif

#include "CSwiftRuntime.h"
#include <stdint.h>
#include <string.h>

enum { ocd_max_build_id = 64, ocd_nt_gnu_build_id = 3 };

size_t ocd_note_build_id(const unsigned char *_Nonnull notes, size_t size, unsigned char *_Nonnull out) {
    size_t offset = 0;
    // An ELF note header is three 32-bit words: name size, description size, type.
    while (size - offset >= 3 * sizeof(uint32_t)) {
        uint32_t header[3];
        memcpy(header, notes + offset, sizeof(header));
        offset += sizeof(header);
        size_t name = ((size_t)header[0] + 3) & ~(size_t)3;
        size_t description = ((size_t)header[1] + 3) & ~(size_t)3;
        if (name > size - offset || description > size - offset - name) return 0;
        if (header[2] == ocd_nt_gnu_build_id && header[0] == 4 && memcmp(notes + offset, "GNU", 4) == 0
            && header[1] > 0 && header[1] <= ocd_max_build_id) {
            memcpy(out, notes + offset + name, header[1]);
            return header[1];
        }
        offset += name + description;
    }
    return 0;
}

#if defined(__linux__) && defined(__ELF__) && defined(__x86_64__)
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum { ocd_max_code_segments = 8 };

struct ocd_loaded_library {
    const char *_Nonnull suffix;
    uintptr_t base;
    char path[4096];
    unsigned char buildID[ocd_max_build_id];
    size_t buildIDLength;
    uintptr_t codeStart[ocd_max_code_segments];
    uintptr_t codeEnd[ocd_max_code_segments];
    int codeSegments;
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
    for (int index = 0; index < info->dlpi_phnum; index++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[index];
        if (segment->p_type == PT_NOTE && library->buildIDLength == 0) {
            library->buildIDLength = ocd_note_build_id((const unsigned char *)(library->base + segment->p_vaddr),
                                                       segment->p_memsz, library->buildID);
        } else if (segment->p_type == PT_LOAD && (segment->p_flags & PF_X) && library->codeSegments < ocd_max_code_segments) {
            library->codeStart[library->codeSegments] = library->base + segment->p_vaddr;
            library->codeEnd[library->codeSegments] = library->base + segment->p_vaddr + segment->p_memsz;
            library->codeSegments += 1;
        }
    }
    library->found = 1;
    return 1;
}

void *_Nullable ocd_library_function(const char *_Nonnull suffix, const char *_Nonnull symbol) {
    struct ocd_loaded_library library;
    memset(&library, 0, sizeof(library));
    library.suffix = suffix;
    dl_iterate_phdr(ocd_match_library, &library);
    if (!library.found || library.buildIDLength == 0) return NULL;
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
    int sameFile = 0;
    if (memcmp(header->e_ident, ELFMAG, SELFMAG) == 0 && header->e_ident[EI_CLASS] == ELFCLASS64
        && header->e_phentsize == sizeof(Elf64_Phdr) && header->e_phoff > 0 && header->e_phoff <= size
        && (size - header->e_phoff) / sizeof(Elf64_Phdr) >= header->e_phnum) {
        const Elf64_Phdr *segments = (const Elf64_Phdr *)(bytes + header->e_phoff);
        for (unsigned index = 0; index < header->e_phnum; index++) {
            const Elf64_Phdr *segment = &segments[index];
            if (segment->p_type != PT_NOTE || segment->p_offset > size || segment->p_filesz > size - segment->p_offset) continue;
            unsigned char fileID[ocd_max_build_id];
            size_t fileIDLength = ocd_note_build_id(bytes + segment->p_offset, segment->p_filesz, fileID);
            if (fileIDLength == 0) continue;
            sameFile = fileIDLength == library.buildIDLength && memcmp(fileID, library.buildID, fileIDLength) == 0;
            break;
        }
    }
    if (sameFile && header->e_shentsize == sizeof(Elf64_Shdr) && header->e_shoff > 0
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
                if (memcmp(text + candidate->st_name, symbol, symbolLength + 1) != 0) continue;
                uintptr_t address = library.base + candidate->st_value;
                for (int code = 0; code < library.codeSegments; code++) {
                    if (address >= library.codeStart[code] && address < library.codeEnd[code]) result = (void *)address;
                }
                break;
            }
        }
    }
    munmap(map, size);
    return result;
}
#else
void *_Nullable ocd_library_function(const char *_Nonnull suffix, const char *_Nonnull symbol) {
    (void)suffix; (void)symbol;
    return NULL;
}
#endif
