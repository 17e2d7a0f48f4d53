package dev.kubefake;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** README's Java quickstart: one server per test class, a fabric8 client from its kubeconfig. */
class QuickstartTest {
  static Kubefake server;
  static KubernetesClient client;

  @BeforeAll
  static void start() throws Exception {
    server = Kubefake.start();
    client = server.client();
  }

  @AfterAll
  static void stop() throws Exception {
    client.close();
    server.close();
  }

  @Test
  void configMapRoundTrips() {
    client.configMaps().inNamespace("default").resource(new ConfigMapBuilder()
        .withNewMetadata().withName("settings").endMetadata()
        .addToData("mode", "test").build()).create();
    assertEquals(Map.of("mode", "test"),
        client.configMaps().inNamespace("default").withName("settings").get().getData());
  }
}
