import CDToolKit
import Foundation
import OCDTestSupport
import Testing

@Suite("cdtool compile")
struct CompileCommandTests {
    func temporaryOutput() -> String {
        ScratchFiles.path("Out.momd").path
    }

    @Test("Every fixture model compiles and reads back identical", arguments: Fixtures.modelVersionFolders().filter {
        FileManager.default.fileExists(atPath: $0.appendingPathComponent("contents").path)
    })
    func compiledModelReadsBackIdentical(_ folder: URL) throws {
        let output = temporaryOutput()
        let compile = CDTool.run(["compile", folder.path, "-o", output])
        guard compile.status == 0 else {
            // A model with errors is refused; then `validate` must report an error too.
            #expect(compile.error.contains("the model has errors"))
            #expect(CDTool.run(["model", "validate", folder.path]).output.contains("error:"))
            return
        }
        let source = CDTool.run(["model", "inspect", folder.path, "--json"])
        let compiled = CDTool.run(["model", "inspect", output, "--json"])
        #expect(compiled.status == 0)
        #expect(compiled.output == source.output)
    }

    @Test func versionInfoHoldsTheHashesMomcWrites() throws {
        guard let models = Fixtures.models, let stores = Fixtures.stores else { return }
        let output = temporaryOutput()
        let run = CDTool.run(["compile", models.appendingPathComponent("alemar11__CoreDataPlus__SampleModel").path, "-o", output])
        #expect(run.status == 0)
        let ours = try #require(NSDictionary(contentsOfFile: output + "/VersionInfo.plist") as? [String: Any])
        let apples = try #require(NSDictionary(contentsOf: stores.appendingPathComponent("compiled-models/alemar11__CoreDataPlus/SampleModel/Fixtures/SampleModel.momd/VersionInfo.plist")) as? [String: Any])
        #expect(ours["NSManagedObjectModel_VersionHashes"] as? [String: [String: Data]] == apples["NSManagedObjectModel_VersionHashes"] as? [String: [String: Data]])
        #expect(ours["NSManagedObjectModel_CurrentVersionName"] as? String == apples["NSManagedObjectModel_CurrentVersionName"] as? String)
    }

    @Test func modelsWithErrorsAreNotCompiled() throws {
        let folder = ScratchFiles.path("Bad.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(#"<?xml version="1.0"?><model><entity name="A"><relationship name="r" maxCount="1" destinationEntity="Nowhere"/></entity></model>"#.utf8)
            .write(to: folder.appendingPathComponent("contents"))
        let output = temporaryOutput()
        let run = CDTool.run(["compile", folder.path, "-o", output])
        #expect(run.status == 1)
        #expect(run.error.contains("A.r: the destination entity 'Nowhere' is not in the model"))
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    /// Models are found by extension: a compiled folder named `Model.mom` could be neither loaded nor
    /// replaced by the same command run again, so the output must be named `.momd`.
    @Test func anOutputNotNamedMomdIsRefusedAndNothingIsWritten() throws {
        let folder = ScratchFiles.path("Plain.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(#"<?xml version="1.0"?><model><entity name="A"><attribute name="x" attributeType="String" optional="YES"/></entity></model>"#.utf8)
            .write(to: folder.appendingPathComponent("contents"))
        for name in ["Model.mom", "Out"] {
            let output = ScratchFiles.path(name).path
            let run = CDTool.run(["compile", folder.path, "-o", output])
            #expect(run.status == 1)
            #expect(run.error.contains(".momd"))
            #expect(!FileManager.default.fileExists(atPath: output))
        }
        let momd = ScratchFiles.path("Plain.momd").path
        #expect(CDTool.run(["compile", folder.path, "-o", momd]).status == 0)
        #expect(CDTool.run(["model", "hashes", momd]).status == 0)
        #expect(CDTool.run(["compile", folder.path, "-o", momd]).status == 0)
    }

    @Test func warningsArePrintedButDoNotStopCompilation() throws {
        let folder = ScratchFiles.path("Warn.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(#"<?xml version="1.0"?><model><entity name="A"><relationship name="self_" maxCount="1" destinationEntity="A"/></entity></model>"#.utf8)
            .write(to: folder.appendingPathComponent("contents"))
        let run = CDTool.run(["compile", folder.path, "-o", temporaryOutput()])
        #expect(run.status == 0)
        #expect(run.error.contains("warning: A.self_: no inverse relationship"))
    }
}

@Suite("cdtool compile never deletes what it did not write")
struct CompileOutputSafetyTests {
    @Test func anExistingFolderThatIsNotACompiledModelIsLeftAlone() throws {
        guard let models = Fixtures.models else { return }
        let victim = ScratchFiles.path("victim.momd")
        try FileManager.default.createDirectory(at: victim, withIntermediateDirectories: true)
        try Data("keep me".utf8).write(to: victim.appendingPathComponent("notes.txt"))
        let run = CDTool.run(["compile", models.appendingPathComponent("LoopKit__LoopKit__Model/Model.xcdatamodel").path, "-o", victim.path])
        #expect(run.status == 1)
        #expect(run.error.contains("refusing to replace it"))
        #expect(FileManager.default.fileExists(atPath: victim.appendingPathComponent("notes.txt").path))
    }

    @Test func aPreviousCompiledModelIsReplaced() throws {
        guard let models = Fixtures.models else { return }
        let output = ScratchFiles.path("Out.momd").path
        let source = models.appendingPathComponent("LoopKit__LoopKit__Model/Model.xcdatamodel").path
        #expect(CDTool.run(["compile", source, "-o", output]).status == 0)
        #expect(CDTool.run(["compile", source, "-o", output]).status == 0)
        #expect(CDTool.run(["model", "hashes", output]).status == 0)
    }
}
