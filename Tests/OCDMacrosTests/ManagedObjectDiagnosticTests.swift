// @ManagedObject's misuse: a compile error, and no member added.

import SwiftSyntaxMacrosGenericTestSupport
import Testing

@Suite("@ManagedObject diagnostics")
struct ManagedObjectDiagnosticTests {
    @Test(arguments: ["struct Employee", "enum Employee", "actor Employee", "protocol Employee", "extension Employee"])
    func aTypeThatIsNotAClassIsAnError(declaration: String) {
        assertExpansion(
            """
            @ManagedObject
            \(declaration) {
                var name: String { "" }
            }
            """,
            expandsTo: """
                \(declaration) {
                    var name: String { "" }
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@ManagedObject applies to a class that inherits from NSManagedObject",
                    line: 1, column: 1
                )
            ],
            macros: managedObjectOnly
        )
    }

    @Test(arguments: ["<T>", "<Key: Hashable, Value>"])
    func aGenericClassIsAnError(generics: String) {
        assertExpansion(
            """
            @ManagedObject
            class Box\(generics): NSManagedObject {
                var name: String { "" }
            }
            """,
            expandsTo: """
                class Box\(generics): NSManagedObject {
                    var name: String { "" }
                }
                """,
            diagnostics: [
                DiagnosticSpec(message: "generic NSManagedObject subclasses are not supported", line: 2, column: 10)
            ],
            macros: managedObjectOnly
        )
    }

    /// Without a superclass the generated `override` could not compile; the macro says why instead.
    @Test func aClassWithoutSuperclassIsAnError() {
        assertExpansion(
            """
            @ManagedObject
            final class Employee {
                var name: String { "" }
            }
            """,
            expandsTo: """
                final class Employee {
                    var name: String { "" }
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@ManagedObject applies to a subclass of NSManagedObject; this class has no superclass",
                    line: 2, column: 13
                )
            ],
            macros: managedObjectOnly
        )
    }
}
