// @Managed's misuse: a compile error at the offending syntax, and no expansion.

import OCDMacros
import SwiftParser
import SwiftSyntax
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosGenericTestSupport
import Testing

private let observersMessage =
    "@Managed generates this property's getter and setter, which cannot be combined with 'willSet' or 'didSet'"

@Suite("@Managed diagnostics")
struct ManagedDiagnosticTests {
    @Test func aLetIsAnError() {
        assertExpansion(
            """
            class Employee: NSManagedObject {
                @Managed let name: String?
            }
            """,
            expandsTo: """
                class Employee: NSManagedObject {
                    let name: String?
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@Managed needs 'var' instead of 'let': it gives the property a getter and a setter",
                    line: 2, column: 14
                )
            ]
        )
    }

    @Test func aStaticPropertyIsAnError() {
        assertExpansion(
            """
            class Employee: NSManagedObject {
                @Managed static var count: Int
            }
            """,
            expandsTo: """
                class Employee: NSManagedObject {
                    static var count: Int
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@Managed applies to instance properties; a 'static' property belongs to no managed object",
                    line: 2, column: 14
                )
            ]
        )
    }

    @Test func aClassPropertyIsAnError() {
        assertExpansion(
            """
            class Employee: NSManagedObject {
                @Managed class var count: Int
            }
            """,
            expandsTo: """
                class Employee: NSManagedObject {
                    class var count: Int
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@Managed applies to instance properties; a 'class' property belongs to no managed object",
                    line: 2, column: 14
                )
            ]
        )
    }

    @Test func aMissingTypeAnnotationIsAnError() {
        assertExpansion(
            """
            class Employee: NSManagedObject {
                @Managed var name
            }
            """,
            expandsTo: """
                class Employee: NSManagedObject {
                    var name
                }
                """,
            diagnostics: [
                DiagnosticSpec(message: "@Managed needs an explicit type, as Core Data's codegen writes it", line: 2, column: 18)
            ]
        )
    }

    @Test func anInitialValueIsAnError() {
        assertExpansion(
            """
            class Employee: NSManagedObject {
                @Managed var age: Int16 = 18
            }
            """,
            expandsTo: """
                class Employee: NSManagedObject {
                    var age: Int16 = 18
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "a managed property's value lives in the managed object context; "
                        + "set defaults in the model or in awakeFromInsert()",
                    line: 2, column: 29
                )
            ]
        )
    }

    /// `var age = 18` lacks both the type and the place for a default: both are reported.
    @Test func anInferredInitialValueReportsBothErrors() {
        assertExpansion(
            """
            class Employee: NSManagedObject {
                @Managed var age = 18
            }
            """,
            expandsTo: """
                class Employee: NSManagedObject {
                    var age = 18
                }
                """,
            diagnostics: [
                DiagnosticSpec(message: "@Managed needs an explicit type, as Core Data's codegen writes it", line: 2, column: 18),
                DiagnosticSpec(
                    message: "a managed property's value lives in the managed object context; "
                        + "set defaults in the model or in awakeFromInsert()",
                    line: 2, column: 22
                ),
            ]
        )
    }

    /// A getter, a getter and setter, or observers: the macro writes the accessors itself.
    @Test(arguments: [
        ("{ \"x\" }", "@Managed generates this property's getter and setter; remove its accessor block"),
        ("{ get { \"x\" } set {} }", "@Managed generates this property's getter and setter; remove its accessor block"),
        ("{ willSet {} }", observersMessage),
        ("{ didSet {} }", observersMessage),
        ("{ willSet {} didSet {} }", observersMessage),
    ])
    func anAccessorBlockIsAnError(block: String, message: String) {
        assertExpansion(
            """
            class Employee: NSManagedObject {
                @Managed var name: String \(block)
            }
            """,
            expandsTo: """
                class Employee: NSManagedObject {
                    var name: String \(block)
                }
                """,
            diagnostics: [DiagnosticSpec(message: message, line: 2, column: 31)]
        )
    }

    /// The test host stops before expanding an attached macro on several variables, with its own errors, so
    /// this test calls the macro as the compiler does: the peer role for the declaration, which reports, and the
    /// accessor role, which expands to nothing.
    @Test func severalVariablesInOneDeclarationAreAnError() throws {
        let source = Parser.parse(
            source: """
                class Employee: NSManagedObject {
                    @Managed var firstName: String?, lastName: String?
                }
                """
        )
        let classDecl = try #require(source.statements.first?.item.as(ClassDeclSyntax.self))
        let variable = try #require(classDecl.memberBlock.members.first?.decl.as(VariableDeclSyntax.self))
        let attribute = try #require(variable.attributes.first?.as(AttributeSyntax.self))
        let context = BasicMacroExpansionContext(lexicalContext: [Syntax(classDecl)])

        #expect(try ManagedMacro.expansion(of: attribute, providingPeersOf: variable, in: context).isEmpty)
        #expect(try ManagedMacro.expansion(of: attribute, providingAccessorsOf: variable, in: context).isEmpty)

        let converter = SourceLocationConverter(fileName: "test.swift", tree: source)
        let reported = context.diagnostics.map { diagnostic in
            let location = diagnostic.location(converter: converter)
            return "\(location.line):\(location.column) \(diagnostic.diagMessage.severity) \(diagnostic.message)"
        }
        #expect(
            reported == [
                "2:18 error @Managed applies to one variable per declaration; "
                    + "declare each managed property with its own 'var'"
            ]
        )
    }

    @Test func aTuplePatternIsAnError() {
        assertExpansion(
            """
            class Employee: NSManagedObject {
                @Managed var (first, last): (String, String)
            }
            """,
            expandsTo: """
                class Employee: NSManagedObject {
                    var (first, last): (String, String)
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@Managed applies to one variable per declaration; declare each managed property with its own 'var'",
                    line: 2, column: 18
                )
            ]
        )
    }

    @Test func aFunctionIsAnError() {
        assertExpansion(
            """
            class Employee: NSManagedObject {
                @Managed func name() -> String { "" }
            }
            """,
            expandsTo: """
                class Employee: NSManagedObject {
                    func name() -> String { "" }
                }
                """,
            diagnostics: [
                DiagnosticSpec(message: "@Managed applies to a 'var' property of an NSManagedObject subclass", line: 2, column: 5)
            ]
        )
    }

    @Test(arguments: ["struct", "enum", "actor", "protocol"])
    func aPropertyOfANonClassTypeIsAnError(kind: String) {
        assertExpansion(
            """
            \(kind) Employee {
                @Managed var name: String?
            }
            """,
            expandsTo: """
                \(kind) Employee {
                    var name: String?
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@Managed applies to properties of an NSManagedObject subclass or of an extension of one",
                    line: 2, column: 14
                )
            ]
        )
    }

    @Test func aGlobalVariableIsAnError() {
        assertExpansion(
            """
            @Managed var name: String?
            """,
            expandsTo: """
                var name: String?
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@Managed applies to properties of an NSManagedObject subclass or of an extension of one",
                    line: 1, column: 10
                )
            ]
        )
    }

    /// Every independent misuse is reported at once, not one per build.
    @Test func severalMisusesAreAllReported() {
        assertExpansion(
            """
            class Employee: NSManagedObject {
                @Managed static let name = ""
            }
            """,
            expandsTo: """
                class Employee: NSManagedObject {
                    static let name = ""
                }
                """,
            diagnostics: [
                DiagnosticSpec(
                    message: "@Managed needs 'var' instead of 'let': it gives the property a getter and a setter",
                    line: 2, column: 21
                ),
                DiagnosticSpec(
                    message: "@Managed applies to instance properties; a 'static' property belongs to no managed object",
                    line: 2, column: 14
                ),
                DiagnosticSpec(message: "@Managed needs an explicit type, as Core Data's codegen writes it", line: 2, column: 25),
                DiagnosticSpec(
                    message: "a managed property's value lives in the managed object context; "
                        + "set defaults in the model or in awakeFromInsert()",
                    line: 2, column: 30
                ),
            ]
        )
    }
}
