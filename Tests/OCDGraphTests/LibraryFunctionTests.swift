import CSwiftRuntime
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// CSwiftRuntime's lookup of a loaded library's functions in its file's symbol table (decision D25): the
/// address it computes is the loader's, and it refuses what it cannot vouch for.
@Suite struct LibraryFunctionTests {
    /// An ELF note: header, name padded to 4 bytes, description padded to 4 bytes.
    private func note(type: UInt32, name: String, description: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        let nameBytes = Array(name.utf8) + [0]
        for value in [UInt32(nameBytes.count), UInt32(description.count), type] {
            withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
        }
        bytes += nameBytes + Array(repeating: 0, count: (4 - nameBytes.count % 4) % 4)
        bytes += description + Array(repeating: 0, count: (4 - description.count % 4) % 4)
        return bytes
    }

    private func buildID(_ notes: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 64)
        let length = notes.withUnsafeBufferPointer { ocd_note_build_id($0.baseAddress!, $0.count, &out) }
        return Array(out.prefix(length))
    }

    @Test func buildIDsAreReadFromNotesAndDamagedNotesGiveNone() {
        let id: [UInt8] = (1...20).map { UInt8($0) }
        #expect(buildID(note(type: 3, name: "GNU", description: id)) == id)
        // After another note (gold's version), and not from a note of another owner.
        #expect(buildID(note(type: 4, name: "GNU", description: Array("gold 1.16".utf8)) + note(type: 3, name: "GNU", description: id)) == id)
        #expect(buildID(note(type: 3, name: "XYZ", description: id)).isEmpty)
        let whole = note(type: 3, name: "GNU", description: id)
        #expect(buildID(Array(whole.dropLast(4))).isEmpty, "a truncated note")
        #expect(buildID(Array(whole.prefix(8))).isEmpty, "a truncated header")
    }

    @Test func anExportedFunctionIsWhereTheLoaderPutsIt() throws {
        #if os(Linux) && arch(x86_64)
        let name = "$s11Observation0A9RegistrarVACycfC"
        guard let found = ocd_library_function("/libswiftObservation.so", name) else {
            print("note: libswiftObservation.so has no symbol table here (stripped); the lookup is not exercised")
            return
        }
        let handle = try #require(dlopen("libswiftObservation.so", RTLD_NOW | RTLD_NOLOAD))
        defer { dlclose(handle) }
        #expect(found == dlsym(handle, name))
        #expect(ocd_library_function("/libswiftObservation.so", "no_such_function_of_observation") == nil)
        #expect(ocd_library_function("/libocd-not-loaded.so", name) == nil)
        #else
        #expect(ocd_library_function("/libswiftObservation.so", "$s11Observation0A9RegistrarVACycfC") == nil)
        #endif
    }
}
