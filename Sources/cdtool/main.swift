import CDToolKit

CDTool.runAsMain()
