// The VS Code client of `modelc lsp`: starts the language server for `.cf` files (the binary
// named by the `modelc.path` setting, else `modelc` on PATH), restarts it when it exits, and
// offers commands that run modelc on the workspace's model.
import { execFile } from "child_process";
import * as vscode from "vscode";
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
} from "vscode-languageclient/node";

let client: LanguageClient | undefined;
let output: vscode.OutputChannel;
/** How many times in a row the server stopped (reset when it starts). */
let restarts = 0;

/** The modelc binary: the setting, or `modelc` on PATH. */
function modelcPath(): string {
  const configured = vscode.workspace.getConfiguration("modelc").get<string>("path");
  return configured !== undefined && configured.trim() !== "" ? configured.trim() : "modelc";
}

/** The directory of the model: the workspace folder of the active file, or the first one. */
function modelDirectory(): string | undefined {
  const active = vscode.window.activeTextEditor?.document.uri;
  const folder = active !== undefined ? vscode.workspace.getWorkspaceFolder(active) : undefined;
  return (folder ?? vscode.workspace.workspaceFolders?.[0])?.uri.fsPath;
}

async function startServer(): Promise<void> {
  const serverOptions: ServerOptions = { command: modelcPath(), args: ["lsp"] };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: "file", language: "cf" }],
    outputChannel: output,
    // Diagnostic codes link to `modelc-explain:E0101`, which the provider below opens.
    initializationOptions: { codeExplanations: true },
    // A server that stops is started again; after five stops in a row the user is told.
    errorHandler: {
      error: () => ({ action: ErrorAction.Continue }),
      closed: () => {
        restarts += 1;
        if (restarts > 5) {
          return { action: CloseAction.DoNotRestart, message: "modelc lsp stopped five times; see the modelc output" };
        }
        return { action: CloseAction.Restart };
      },
    },
  };
  client = new LanguageClient("modelc", "modelc", serverOptions, clientOptions);
  try {
    await client.start();
    restarts = 0;
  } catch (error) {
    vscode.window.showErrorMessage(
      `Could not start \`${modelcPath()} lsp\`: ${String(error)}. Set "modelc.path" to the modelc binary.`,
    );
  }
}

/** Runs modelc with `args` in a terminal in the model's directory. */
function runInTerminal(args: string[]): void {
  const directory = modelDirectory();
  if (directory === undefined) {
    vscode.window.showErrorMessage("Open a folder with a model (main.cf or project.yml) first.");
    return;
  }
  const terminal = vscode.window.createTerminal({ name: "modelc", cwd: directory });
  terminal.show();
  terminal.sendText([modelcPath(), ...args].map((a) => (/\s/.test(a) ? `"${a}"` : a)).join(" "));
}

/** Shows the resource graph as Mermaid text in a new editor. */
function showGraph(): void {
  const directory = modelDirectory();
  if (directory === undefined) {
    vscode.window.showErrorMessage("Open a folder with a model (main.cf or project.yml) first.");
    return;
  }
  execFile(modelcPath(), ["--format", "mermaid", "graph"], { cwd: directory }, async (error, stdout, stderr) => {
    if (error !== null && stdout.length === 0) {
      output.appendLine(stderr);
      vscode.window.showErrorMessage("modelc graph failed; see the modelc output.");
      return;
    }
    const document = await vscode.workspace.openTextDocument({ language: "markdown", content: "```mermaid\n" + stdout + "```\n" });
    await vscode.window.showTextDocument(document);
  });
}

/** `modelc-explain:E0101`: what `modelc explain E0101` prints, as a read-only document. */
const explanations: vscode.TextDocumentContentProvider = {
  provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    return new Promise((resolve) => {
      execFile(modelcPath(), ["explain", uri.path], (error, stdout, stderr) => {
        resolve(error === null ? stdout : `modelc explain ${uri.path} failed:\n${stderr}`);
      });
    });
  },
};

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel("modelc");
  context.subscriptions.push(
    output,
    vscode.workspace.registerTextDocumentContentProvider("modelc-explain", explanations),
    vscode.commands.registerCommand("modelc.compile", () => runInTerminal(["compile"])),
    vscode.commands.registerCommand("modelc.export", () => runInTerminal(["export"])),
    vscode.commands.registerCommand("modelc.showGraph", showGraph),
    vscode.commands.registerCommand("modelc.restartServer", async () => {
      await client?.stop();
      restarts = 0;
      await startServer();
    }),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration("modelc.path")) {
        await client?.stop();
        await startServer();
      }
    }),
  );
  await startServer();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
