package dev.kubefake;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

/**
 * A {@code kubefake serve} on 127.0.0.1 and a free port, for one test class or one test: {@link
 * #start} returns once the server is ready (CRDs and objects given as flags are loaded by then),
 * {@link #client} is a fabric8 client from the kubeconfig it wrote (its CA and an admin token),
 * and {@link #close} stops it. The binary is $KUBEFAKE_BIN, else {@code kubefake} on the PATH.
 */
public final class Kubefake implements AutoCloseable {
  private final Process process;
  private final Path dir;
  private final String url;
  private final Path kubeconfig;

  private Kubefake(Process process, Path dir, String url, Path kubeconfig) {
    this.process = process;
    this.dir = dir;
    this.url = url;
    this.kubeconfig = kubeconfig;
  }

  /** Starts the server with more {@code serve} flags, such as {@code "--crds", "crds/"}. */
  public static Kubefake start(String... flags) throws IOException, InterruptedException {
    String binary = System.getenv().getOrDefault("KUBEFAKE_BIN", "kubefake");
    Path dir = Files.createTempDirectory("kubefake-");
    List<String> command = new ArrayList<>(List.of(binary, "serve", "--port", "0",
        "--kubeconfig", dir.resolve("kubeconfig").toString()));
    command.addAll(List.of(flags));
    Process process = new ProcessBuilder(command)
        .redirectError(dir.resolve("stderr").toFile())
        .start();
    CompletableFuture<String[]> ready = new CompletableFuture<>();
    Thread reader = new Thread(() -> readUntilReady(process, ready), "kubefake-stdout");
    reader.setDaemon(true);
    reader.start();
    try {
      String[] lines = ready.get(30, TimeUnit.SECONDS);
      return new Kubefake(process, dir, lines[0], Path.of(lines[1]));
    } catch (ExecutionException | TimeoutException e) {
      process.destroyForcibly().waitFor();
      String stderr = Files.readString(dir.resolve("stderr"));
      deleteTree(dir);
      throw new IOException("kubefake serve was not ready: " + e.getMessage() + "\n" + stderr, e);
    }
  }

  // Completes `ready` with the URL and kubeconfig lines, then keeps draining stdout.
  private static void readUntilReady(Process process, CompletableFuture<String[]> ready) {
    String url = null;
    try (BufferedReader out = new BufferedReader(
        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = out.readLine()) != null; ) {
        if (line.startsWith("KUBEFAKE_URL=")) {
          url = line.substring("KUBEFAKE_URL=".length());
        } else if (line.startsWith("KUBECONFIG=") && url != null) {
          ready.complete(new String[] {url, line.substring("KUBECONFIG=".length())});
        }
      }
      ready.completeExceptionally(new IOException("exited before it was ready"));
    } catch (IOException e) {
      ready.completeExceptionally(e);
    }
  }

  /** The server's URL, such as {@code https://127.0.0.1:40123}. */
  public String url() {
    return url;
  }

  /** The kubeconfig the server wrote. */
  public Path kubeconfig() {
    return kubeconfig;
  }

  /**
   * A new fabric8 client for the server, as its admin, with fabric8's defaults (its watches and
   * informers speak WebSocket, as against a real apiserver); close it before the server.
   */
  public KubernetesClient client() throws IOException {
    Config config = Config.fromKubeconfig(Files.readString(kubeconfig));
    return new KubernetesClientBuilder().withConfig(config).build();
  }

  /** Stops the server (SIGTERM, then SIGKILL after 10 s) and removes its files. */
  @Override
  public void close() throws IOException, InterruptedException {
    process.destroy();
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
    }
    deleteTree(dir);
  }

  private static void deleteTree(Path dir) throws IOException {
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(path);
      }
    }
  }
}
