package dev.kubefake;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** Start-to-ready time of {@link Kubefake#start} as a JUnit test sees it (reported, not timed). */
class StartupTest {
  @Test
  void startToReady() throws Exception {
    double[] millis = new double[10];
    for (int i = 0; i < millis.length; i++) {
      long begin = System.nanoTime();
      try (Kubefake server = Kubefake.start()) {
        millis[i] = (System.nanoTime() - begin) / 1e6;
        assertTrue(server.url().startsWith("https://127.0.0.1:"), server.url());
      }
    }
    Arrays.sort(millis);
    System.out.printf("start-to-ready median %.1f ms (min %.1f, max %.1f)%n",
        millis[5], millis[0], millis[9]);
  }
}
